package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/statecraft/statecraft/plan"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/uid"
)

// An upgrade carries a savepoint taken while OLD ran over to NEW: plan.Diff matches NEW's nodes
// with OLD's (by id, then by structure where ids were renumbered) and lists, per matched stateful
// node, the operator UIDs that change. Each such operator found in the savepoint is renamed to its
// NEW UID by a migration script (statecraft migrate run), unless the node's state layout changed:
// then NEW's operator could not read the old bytes whatever its UID, so no rename is proposed and
// the node is reported as blocked.
//
//	OLD plan --plan.Diff--> NEW plan          savepoint (taken under OLD)
//	   node 3 ~~~~~~~~~~~~~> node 4              op 4f0f...  (3_group-aggregate)
//	   3_group-aggregate      4_group-aggregate     |
//	                                                v  rename-uid {from: hash:4f0f..., to: 4_group-aggregate}
//	                                             op 8c1e...  (4_group-aggregate)  = what NEW looks up
//
// After the renames the savepoint is checked against NEW as Check does (with the renamed operator
// ids), so Restores says whether Flink would then restore it.

// Rename is one savepoint operator the script renames.
type Rename struct {
	Node           int    `json:"node"`    // NEW node id
	OldNode        int    `json:"oldNode"` // OLD node id
	Type           string `json:"type"`    // exec node type
	Transformation string `json:"transformation"`
	From           string `json:"from"`     // OLD UID
	FromHash       string `json:"fromHash"` // the savepoint operator's id
	To             string `json:"to"`       // NEW UID
	ToHash         string `json:"toHash"`
	HasState       bool   `json:"hasState"` // false: the operator is in the savepoint but holds nothing
}

// Blocked is a stateful node whose savepoint state cannot be carried over by a rename.
type Blocked struct {
	Node    int    `json:"node,omitempty"`    // NEW node id (0 when the node was removed)
	OldNode int    `json:"oldNode,omitempty"` // OLD node id (0 when the node was added)
	Type    string `json:"type"`
	UID     string `json:"uid,omitempty"` // the OLD UID whose state stays behind
	Reason  string `json:"reason"`
}

// UpgradeReport is the result of Upgrade.
type UpgradeReport struct {
	Diff    *plan.DiffReport `json:"-"`
	Verdict plan.Verdict     `json:"verdict"` // the plan diff's overall verdict
	Renames []Rename         `json:"renames"`
	Blocked []Blocked        `json:"blocked"`
	// Before is the restore check of the savepoint as it is against NEW; After with the renames
	// applied.
	Before *Report `json:"before"`
	After  *Report `json:"after"`
}

// Upgrade plans the migration of savepoint sp (taken under OLD) to NEW. opts are the session's
// UID options of the NEW job (the diff computes both plans' UIDs with Flink's defaults and the
// plans' own per-node formats), check describes the NEW job beyond its plan.
func Upgrade(oldp, newp *plan.Plan, opts plan.UIDOptions, sp *savepoint.Savepoint, check CheckOptions) (*UpgradeReport, error) {
	d := plan.Diff(oldp, newp)
	ops := Operators(sp)
	byHash := make(map[string]*Operator, len(ops))
	for _, o := range ops {
		byHash[o.Hash] = o
	}
	r := &UpgradeReport{Diff: d, Verdict: d.Verdict, Renames: []Rename{}, Blocked: []Blocked{}}
	// OLD's UIDs, for the operators of removed nodes; none on error (nothing found for them).
	oldUIDs, _ := oldp.UIDs(opts)
	for i := range d.Nodes {
		n := &d.Nodes[i]
		if n.Status == "removed" || n.Status == "added" {
			if n.Stateful() && n.Status == "removed" {
				if o := oldStateOperator(n, byHash, oldUIDs); o != nil && o.HasState {
					r.Blocked = append(r.Blocked, Blocked{OldNode: n.Old.ID, Type: n.Old.Type, UID: o.UID,
						Reason: fmt.Sprintf("OLD node %d (%s) has no counterpart in NEW: its state (%s) has nowhere to go", n.Old.ID, n.Old.Type, operatorLabel(o))})
				}
			}
			continue
		}
		if len(n.UIDRenames) == 0 {
			continue
		}
		if n.Verdict == plan.Incompatible {
			// The layout changed: a rename would only turn "state left behind" into "state that
			// fails to restore"; say so and leave the operator alone.
			for _, u := range n.UIDRenames {
				if o := byHash[hashOf(u.OldHash, u.Old)]; o != nil && o.HasState {
					r.Blocked = append(r.Blocked, Blocked{Node: n.New.ID, OldNode: n.Old.ID, Type: n.New.Type, UID: u.Old,
						Reason: fmt.Sprintf("state layout changed (%s): no rename of %s to %s", n.Reason, u.Old, u.New)})
				}
			}
			continue
		}
		for _, u := range n.UIDRenames {
			o := byHash[hashOf(u.OldHash, u.Old)]
			if o == nil {
				continue // nothing in the savepoint under the old id: nothing to carry
			}
			r.Renames = append(r.Renames, Rename{Node: n.New.ID, OldNode: n.Old.ID, Type: n.New.Type, Transformation: u.Transformation,
				From: u.Old, FromHash: o.Hash, To: u.New, ToHash: hashOf(u.NewHash, u.New), HasState: o.HasState})
		}
	}
	// A rename onto an id the savepoint already holds is possible only when that operator is
	// renamed away in the same step (a chain of shifted ids); otherwise two operators would share
	// one id, which migrate refuses and Flink could not restore.
	leaving := make(map[string]bool, len(r.Renames))
	for _, rn := range r.Renames {
		leaving[rn.FromHash] = true
	}
	kept := r.Renames[:0]
	for _, rn := range r.Renames {
		if o := byHash[rn.ToHash]; o != nil && !leaving[rn.ToHash] {
			r.Blocked = append(r.Blocked, Blocked{Node: rn.Node, OldNode: rn.OldNode, Type: rn.Type, UID: rn.From,
				Reason: fmt.Sprintf("NEW's UID %s is taken in the savepoint by operator %s, which keeps its id: no rename of %s", rn.To, operatorLabel(o), rn.From)})
			continue
		}
		kept = append(kept, rn)
	}
	r.Renames = kept
	// Operators without state are renamed only when they are part of a node that also carries
	// state; an empty operator never blocks a restore, so a script of only those is pointless.
	if !anyState(r.Renames) {
		r.Renames = r.Renames[:0]
	}

	newUIDs, err := newp.UIDs(opts)
	if err != nil {
		return nil, fmt.Errorf("upgrade: NEW plan UIDs: %w", err)
	}
	r.Before = Check(Join(newUIDs, ops), check)
	renamed := make([]*Operator, len(ops))
	to := make(map[string]Rename, len(r.Renames))
	for _, rn := range r.Renames {
		to[rn.FromHash] = rn
	}
	for i, o := range ops {
		c := *o
		if rn, ok := to[o.Hash]; ok {
			c.UID, c.Hash = rn.To, rn.ToHash
		}
		renamed[i] = &c
	}
	r.After = Check(Join(newUIDs, renamed), check)
	return r, nil
}

// StateNote says whether the renamed operator holds state, in the words of the script's comments
// and of the text report.
func (rn Rename) StateNote() string {
	if rn.HasState {
		return "holds state"
	}
	return "holds no state"
}

func anyState(rs []Rename) bool {
	for _, r := range rs {
		if r.HasState {
			return true
		}
	}
	return false
}

// hashOf returns h, or the OperatorID of u when the diff gave no hash.
func hashOf(h, u string) string {
	if h != "" {
		return h
	}
	return uid.Hash(u)
}

// oldStateOperator finds the savepoint operator of a removed OLD node's state-holding
// transformation; nodes are OLD's UIDs.
func oldStateOperator(n *plan.NodeDiff, byHash map[string]*Operator, nodes []plan.NodeUIDs) *Operator {
	for i := range nodes {
		if nodes[i].ID != n.Old.ID {
			continue
		}
		if t := stateHolder(&nodes[i]); t != nil && t.Hash != "" {
			return byHash[t.Hash]
		}
	}
	return nil
}

// Script renders the renames as a migration script (migrate.ParseScript's format). Operators
// are selected by hash (present in every metadata version); strings are written as JSON
// strings, which YAML reads as double-quoted scalars, so any UID survives.
func (r *UpgradeReport) Script(header ...string) []byte {
	var b bytes.Buffer
	b.WriteString("# statecraft migration script: statecraft migrate run SCRIPT SRC DST\n")
	for _, h := range header {
		fmt.Fprintf(&b, "# %s\n", h)
	}
	// Blocked state first, as plan upgrade prints it: an empty script is not "nothing to do"
	// when a rename cannot carry some state over.
	for _, bl := range r.Blocked {
		fmt.Fprintf(&b, "# blocked %s: %s\n", bl.Type, strings.ReplaceAll(bl.Reason, "\n", " "))
	}
	switch {
	case len(r.Renames) == 0 && len(r.Blocked) > 0:
		b.WriteString("# no rename can carry the blocked state over; no other operator needs a new UID\nsteps: []\n")
		return b.Bytes()
	case len(r.Renames) == 0:
		b.WriteString("# no operator of the savepoint needs a new UID\nsteps: []\n")
		return b.Bytes()
	}
	b.WriteString("steps:\n  - rename-uid:\n      renames:\n")
	for _, rn := range r.Renames {
		fmt.Fprintf(&b, "        # node %d -> %d %s (%s), %s\n", rn.OldNode, rn.Node, rn.Type, rn.Transformation, rn.StateNote())
		fmt.Fprintf(&b, "        - {from: %s, to: %s}\n", jsonString("hash:"+rn.FromHash), jsonString(rn.To))
	}
	return b.Bytes()
}

func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
