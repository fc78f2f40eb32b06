package plan

import (
	"fmt"

	"github.com/tidwall/gjson"
)

// Fields a newer Flink added to an exec node.
//
// A plan compiled by Flink 1.20 and the plan Flink 2.3 compiles from the same SQL differ in
// members 2.x added to some exec nodes. Flink 2.3 reads the old plan all the same: its
// @JsonCreator constructors take the new member as nullable and put a value in its place. A
// member that is present in NEW only, with exactly that value, asks Flink for what it builds from
// OLD anyway, so it says nothing about the state. The same holds for a member the operator Flink
// builds for the node never reads. Both were checked against Flink (testdata/flink-1.20/upgrades:
// Flink 1.20 stopped the OLD plan with a savepoint, Flink 2.3 ran NEW from it with non-restored
// state not allowed and produced the rows a job that had never stopped produces).
//
// Any other member, or another value, stays what it was: a stateful node changed. For
// changelog-normalize's filterCondition (2.x pushes a WHERE into the operator) the reason says
// what Flink did: it keeps only rows that pass the filter in its state, a 1.20 savepoint holds
// every row, and the restored job retracted a row its sink never received
// (testdata/flink-1.20/upgrades, changelog-normalize).

// addedField is one member an exec node gained in a newer Flink.
type addedField struct {
	node   string // exec node name (type without version)
	member string // top-level member of the node
	absent string // the value Flink 2.3 puts in place of a missing member, as compact JSON
	where  string // where Flink decides it, for the reason line
	// unread reports, for a node, why Flink 2.3 does not read the member there ("" when it
	// may). Nil when the member is always read.
	unread func(n *Node) string
	// breaks, when set, is what Flink was seen to do with OLD's state under any other value:
	// the change stays incompatible, with this as its reason.
	breaks string
}

var addedFields = []addedField{
	{
		// Flink 2.x StreamExecDeduplicate(..., @Nullable Boolean outputInsertOnly, ...):
		// outputInsertOnly == null ? false : outputInsertOnly (2.3.0 bytecode).
		node: "stream-exec-deduplicate", member: "outputInsertOnly", absent: "false",
		where:  "StreamExecDeduplicate reads a missing outputInsertOnly as false",
		unread: dedupIgnoresOutputInsertOnly,
	},
	{
		// StreamExecOverAggregate(..., @Nullable Integer unboundedOverVersion): null -> 1.
		node: "stream-exec-over-aggregate", member: "unboundedOverVersion", absent: "1",
		where:  "StreamExecOverAggregate reads a missing unboundedOverVersion as 1",
		unread: overIgnoresUnboundedVersion,
	},
	{
		// StreamExecChangelogNormalize(..., @Nullable RexNode filterCondition): null = no
		// filter. 2.x pushes a WHERE on the upsert source into the operator, which then stores
		// only rows that pass it (DeduplicateFunctionHelper.processLastRowOnChangelogWithFilter).
		node: "stream-exec-changelog-normalize", member: "filterCondition", absent: "null",
		where: "StreamExecChangelogNormalize reads a missing filterCondition as no filter",
		breaks: "Flink 2.x moved a filter into the operator, whose state then holds only rows that pass it; " +
			"OLD's state holds every row, and Flink 2.3 restoring it retracted a row the sink never received",
	},
}

// addedByNewerFlink decides whether change c of a matched stateful node is a member a newer
// Flink added that does not touch the node's state (true, with the reason). When the member is
// known to break the state it returns false with the reason; otherwise false and "".
func addedByNewerFlink(d *NodeDiff, c FieldChange) (string, bool) {
	if d.oldNode == nil || d.newNode == nil || c.Detail != "added" {
		return "", false
	}
	ov, nv := d.oldNode.owner.FlinkVersion, d.newNode.owner.FlinkVersion
	if ov == nv {
		// The same Flink wrote both: the member is the query's, not the version's.
		return "", false
	}
	for _, f := range addedFields {
		if d.newNode.Name != f.node || d.oldNode.Name != f.node || c.Path != f.member {
			continue
		}
		if c.New == f.absent {
			return fmt.Sprintf("field added by Flink %s with its default value: %s = %s (%s, so Flink %s runs OLD the same way)",
				nv, f.member, c.New, f.where, nv), true
		}
		if f.unread != nil {
			if why := f.unread(d.newNode); why != "" {
				return fmt.Sprintf("field added by Flink %s that this operator does not read: %s = %s (%s)", nv, f.member, ShortText(c.New, 20), why), true
			}
		}
		if f.breaks != "" {
			return fmt.Sprintf("field added by Flink %s changes the state: %s (%s)", nv, f.member, f.breaks), false
		}
	}
	return "", false
}

// dedupIgnoresOutputInsertOnly: Flink 2.3's processing-time deduplication without mini-batch
// (ProcTimeDeduplicateOperatorTranslator) builds its keep-first or keep-last function without
// looking at outputInsertOnly; the row-time translator and the mini-batch path read it.
func dedupIgnoresOutputInsertOnly(n *Node) string {
	if v := nodeMember(n, "isRowtime"); v.Type != gjson.False {
		return ""
	}
	if nodeMember(n, "configuration").Get(escapeGJSON("table.exec.mini-batch.enabled")).String() == "true" {
		return ""
	}
	return "a processing-time deduplication without mini-batch does not read it"
}

// overIgnoresUnboundedVersion: Flink 2.3 reads unboundedOverVersion only when it builds an
// UNBOUNDED PRECEDING function (createUnboundedOverProcessFunction); a bounded frame takes
// another path.
func overIgnoresUnboundedVersion(n *Node) string {
	groups := nodeMember(n, "overSpec").Get("groups")
	if !groups.IsArray() || len(groups.Array()) == 0 {
		return ""
	}
	for _, g := range groups.Array() {
		if g.Get("lowerBound.kind").String() != "BOUNDED_WINDOW" {
			return ""
		}
	}
	return "only an UNBOUNDED PRECEDING frame reads it; every frame here is bounded"
}
