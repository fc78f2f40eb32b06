package spec

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/statecraft/statecraft/plan"
	"github.com/statecraft/statecraft/statecore/keygroup"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// A SQL operator is declared by the compiled plan and the exec node whose state it holds; its
// uid, key type and states come from the plan (the same derivations `plan` and `savepoint
// check` use, plan/statetypes.go and plan/accumulators.go):
//
//	operators:
//	  - plan: job.plan.json        # COMPILE PLAN's output, relative to the declaration
//	    node: 3                    # the exec node's id: a group aggregate
//	    parallelism: 2
//
// declares the operator <id>_group-aggregate (the plan's uid format) keyed by a RowData of the
// node's grouping columns, with accState (a RowData of the accumulators; TTL when the plan's
// state TTL is set), the keyed states of its state-backed data views (COUNT DISTINCT's
// distinctAcc_<n> and distinctAcc_<n>_null_state, MIN/MAX over retractions' and COLLECT's
// agg<i>$map: viewState) and the user timer queues GroupAggFunction's operator registers. Its
// data lines give keys and accumulators as `dump` prints RowData: `"key":[1]`, `"value":[3,60]`;
// an accumulator field holding a view as {"dataView": "MapView"}, a view's entries as map state
// entries (`"userKey":8,"value":2`).
// Only group aggregates (stream-exec-group-aggregate, not in mini-batch mode; a two-phase
// aggregate's global half runs in a mini-batch operator) whose every field type and view
// statecraft writes (serializer.DeclareRowData, viewState) are declared; any other node is
// refused with the reason, never guessed.

// sqlNodes are the exec nodes a declaration may name (keyed states: accState, its views', timers).
var sqlNodes = map[string]bool{"stream-exec-group-aggregate": true}

// fromPlan fills a plan-declared operator's uid, key type and states from its plan; dir is the
// declaration's directory.
func (o *Operator) fromPlan(dir string) error {
	if o.UID != "" || o.UIDHash != "" || o.KeyType != nil || len(o.States) > 0 {
		return fmt.Errorf("plan %s: a plan's operator takes its uid, key type and states from the plan; declare none of them", o.Plan)
	}
	if o.Node == 0 {
		return fmt.Errorf("plan %s: node: want the id of the exec node whose state the operator holds", o.Plan)
	}
	file := o.Plan
	if !filepath.IsAbs(file) {
		file = filepath.Join(dir, file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	p, err := plan.Parse(file, b)
	if err != nil {
		return err
	}
	n := p.Node(o.Node)
	if n == nil {
		return fmt.Errorf("plan %s: no exec node with id %d", o.Plan, o.Node)
	}
	if !sqlNodes[n.Name] {
		return fmt.Errorf("plan %s: node %d is %s; statecraft declares the state of group aggregates (stream-exec-group-aggregate) only", o.Plan, o.Node, n.Name)
	}
	if n.Configuration()["table.exec.mini-batch.enabled"] == "true" {
		return fmt.Errorf("plan %s: node %d runs in a mini-batch operator (table.exec.mini-batch.enabled), whose states statecraft does not declare", o.Plan, o.Node)
	}
	uids, err := p.UIDs(plan.UIDOptions{})
	if err != nil {
		return err
	}
	for _, nu := range uids {
		if nu.ID != n.ID {
			continue
		}
		for _, t := range nu.Transformations {
			if t.State {
				o.UID = t.UID
			}
		}
		if o.UID == "" {
			return fmt.Errorf("plan %s: node %d's stateful operator has no uid (%s)", o.Plan, o.Node, nu.NoUID)
		}
	}
	st := n.StateTypes()
	if st.Key == nil {
		return fmt.Errorf("plan %s: node %d: key type not derived: %s", o.Plan, o.Node, st.KeyWhy)
	}
	acc, ok := st.Values["accState"]
	if !ok || acc.Kind != "Row" {
		return fmt.Errorf("plan %s: node %d: the accumulator row is not derived: %s", o.Plan, o.Node, st.ValueWhy)
	}
	key, err := serializer.DeclareRowData(st.Key)
	if err != nil {
		return fmt.Errorf("plan %s: node %d: key row %v: %w", o.Plan, o.Node, st.Key, err)
	}
	value, err := serializer.DeclareRowData(acc.Row)
	if err != nil {
		return fmt.Errorf("plan %s: node %d: accumulator row %s: %w", o.Plan, o.Node, acc, err)
	}
	ttl := false
	for _, e := range n.State {
		if e.TTLErr != nil {
			return fmt.Errorf("plan %s: node %d: %s: %w", o.Plan, o.Node, e.Path(), e.TTLErr)
		}
		ttl = ttl || !e.TTL.IsNever()
	}
	if o.Name == "" {
		o.Name = o.UID
	}
	o.KeyType = &Type{snap: key}
	states := map[string]State{"accState": {Name: "accState", Kind: "value", ValueType: &Type{snap: value}, TTL: ttl, line: o.line}}
	var order []string
	for _, name := range viewOrder(st.Values) {
		vs, err := viewState(n, name, st.Values[name])
		if err != nil {
			return fmt.Errorf("plan %s: node %d: %w", o.Plan, o.Node, err)
		}
		vs.TTL, vs.line = ttl, o.line
		states[name] = vs
		order = append(order, name)
	}
	for _, name := range heapOrder(append(order, "accState")) {
		o.States = append(o.States, states[name])
	}
	o.States = append(o.States,
		State{Name: "_timer_state/processing_user-timers", Kind: "timer", line: o.line},
		State{Name: "_timer_state/event_user-timers", Kind: "timer", line: o.line})
	return nil
}

// The keyed states of an aggregate's state-backed data views, as GroupAggFunction.open has them
// registered before accState (the generated handler's open, through PerKeyStateDataViewStore):
//
//	view                            state (TTL as accState's)  value
//	DISTINCT over x (distinctAcc_n) distinctAcc_n      map     Internal<x> (as the column) -> External<BIGINT NOT NULL>
//	  over x, y, ...                distinctAcc_n      map     Internal<ROW<f0 x, f1 y, ...>> -> External<BIGINT NOT NULL>
//	                                distinctAcc_n_null_state   External<BIGINT NOT NULL>: the NULL value's count
//	MIN/MAX over retractions (i)    agg<i>$map         map     External<x NOT NULL> -> External<BIGINT>
//	  of a string, decimal, timestamp                  map     Internal<x NOT NULL> -> External<BIGINT>
//	COLLECT(x) (i)                  agg<i>$map         map     External<x NOT NULL> -> External<INT>
//
// A view's map is registered before its _null_state; the calls' views (in call order) before the
// DISTINCT views (in order of their argument lists). External<x> is x's ExternalSerializer over
// the boxed Java class (serializer.DeclareExternal); x is BIGINT, INT, SMALLINT, TINYINT, DOUBLE,
// FLOAT or BOOLEAN. Internal<x> is the ExternalSerializer of a DISTINCT key, over the argument
// column's internal DataType (DataTypeUtils.toInternalDataType: nullability and length as the
// column has them, plan.Node.DistinctKeyTypes): the boxed class for those types, StringData for
// VARCHAR(n) (STRING) and CHAR(n), DecimalData for DECIMAL(p, s), TimestampData for
// TIMESTAMP(p), whose keys are StringDataSerializer's, DecimalDataSerializer's and
// TimestampDataSerializer's bytes. MIN and MAX over retractions of a VARCHAR(n) (STRING),
// CHAR(n), DECIMAL(p, s) or TIMESTAMP(p) column key their view by the internal DataType of the
// argument made NOT NULL (MinWithRetractAggFunction's valueDataType.notNull(): StringData with
// the column's VarCharType or CharType and length, DecimalData, TimestampData;
// plan.Node.CallArgTypes), and their accumulator's `min`/`max` field has the column's type
// (testdata/specs/sql-retract-minmax, sql-retract-minmax-char). A DISTINCT over
// several columns (LISTAGG(DISTINCT s, '-'): the separator literal is an argument column; Flink
// 2.3.0 does not plan COUNT(DISTINCT a, b), "We now only support the count of one field") keys
// its view by a row of the arguments: ExternalSerializer over a FieldsDataType (RowData, a
// RowType of fields f0, f1, ... typed as the columns; serializer.DeclareExternalRow) with a
// RowDataSerializer inside, a NULL argument a NULL field of the row
// (testdata/specs/sql-distinct-columns). Other views (FIRST_VALUE and LAST_VALUE over
// retractions: arrays of orders; LISTAGG over retractions: list views of strings; views keyed by
// other types) are refused by name. TestDeclareSQLHeaders holds the headers to Flink's.

// viewSQL maps the Java types plan.ValueType names a view's keys and values by to their SQL types.
var viewSQL = map[string]string{"Long": "BIGINT", "Integer": "INT", "Short": "SMALLINT", "Byte": "TINYINT",
	"Double": "DOUBLE", "Float": "FLOAT", "Boolean": "BOOLEAN"}

// viewOrder is the registration order of the view states of vals (every state but accState).
func viewOrder(vals map[string]plan.ValueType) []string {
	rank := func(name string) (int, int, int) {
		var i int
		if _, err := fmt.Sscanf(name, "agg%d$", &i); err == nil && strings.HasPrefix(name, "agg") {
			return 0, i, 0
		}
		base, null := strings.CutSuffix(name, "_null_state")
		fmt.Sscanf(base, "distinctAcc_%d", &i)
		if null {
			return 1, i, 1
		}
		return 1, i, 0
	}
	var names []string
	for name := range vals {
		if name != "accState" {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		a0, a1, a2 := rank(a)
		b0, b1, b2 := rank(b)
		if c := cmp.Compare(a0, b0); c != 0 {
			return c
		}
		if c := cmp.Compare(a1, b1); c != 0 {
			return c
		}
		if c := cmp.Compare(a2, b2); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return names
}

// viewState declares the state of one data view of node n (name and shape from plan.StateTypes).
func viewState(n *plan.Node, name string, v plan.ValueType) (State, error) {
	external := func(e plan.ValueType, nullability string) (*Type, error) {
		sql, ok := "", e.Kind == "External" && len(e.Elems) == 1
		if ok {
			sql, ok = viewSQL[e.Elems[0].Kind]
		}
		if !ok {
			return nil, fmt.Errorf("state %s holds %s: statecraft declares data views of BIGINT, INT, SMALLINT, TINYINT, DOUBLE, FLOAT and BOOLEAN values", name, e)
		}
		snap, err := serializer.DeclareExternal(sql + nullability)
		if err != nil {
			return nil, fmt.Errorf("state %s: %w", name, err)
		}
		return &Type{snap: snap}, nil
	}
	var keyNull, valueNull string
	// declared declares a view's key from the SQL types of the columns it holds, with what for
	// its errors.
	declared := func(declare func() (*serializer.Snapshot, error), what string) func() (*Type, error) {
		return func() (*Type, error) {
			snap, err := declare()
			if err != nil {
				return nil, fmt.Errorf("state %s: %s: %w", name, what, err)
			}
			return &Type{snap: snap}, nil
		}
	}
	// the view's key: a DISTINCT view's from its arguments' column types, a MIN/MAX view's of a
	// string, decimal or timestamp from its argument's column type NOT NULL; nil: from v's
	// element type (external)
	var keyOf func() (*Type, error)
	switch {
	case strings.HasPrefix(name, "distinctAcc_"):
		valueNull = " NOT NULL"
		if strings.HasSuffix(name, "_null_state") {
			break
		}
		var i int
		fmt.Sscanf(name, "distinctAcc_%d", &i)
		keys, why := n.DistinctKeyTypes()
		switch {
		case why != "":
			return State{}, fmt.Errorf("state %s (%s): its key type is not derived: %s", name, v, why)
		case i >= len(keys):
			return State{}, fmt.Errorf("state %s (%s): the plan has %d DISTINCT argument lists", name, v, len(keys))
		case len(keys[i]) > 1:
			row := keys[i]
			keyOf = declared(func() (*serializer.Snapshot, error) { return serializer.DeclareExternalRow(row) },
				"DISTINCT over several columns ("+strings.Join(row, ", ")+")")
		default:
			col := keys[i][0]
			keyOf = declared(func() (*serializer.Snapshot, error) { return serializer.DeclareExternal(col) },
				"DISTINCT over a "+col+" column")
		}
	case strings.HasPrefix(name, "agg"):
		var i int
		fmt.Sscanf(name, "agg%d$", &i)
		fn := gjson.Get(n.Raw, fmt.Sprintf("aggCalls.%d.internalName", i)).Str
		switch {
		case strings.HasSuffix(name, "$map") && (fn == "$MIN$1" || fn == "$MAX$1" || fn == "$COLLECT$1"):
			keyNull, valueNull = " NOT NULL", ""
			if fn == "$COLLECT$1" || v.Kind != "Map" || len(v.Elems) != 2 || len(v.Elems[0].Elems) != 1 {
				break
			}
			if _, boxed := viewSQL[v.Elems[0].Elems[0].Kind]; boxed {
				break
			}
			// MIN/MAX over retractions of a string, decimal or timestamp: the view's key is
			// ExternalSerializer.of(valueDataType.notNull()), valueDataType the argument's
			// internal DataType (StringData of a VARCHAR(n) or CHAR(n), DecimalData,
			// TimestampData; its length, precision and scale as the column has them).
			args, why := n.CallArgTypes(i)
			switch {
			case why != "":
				return State{}, fmt.Errorf("state %s of %s (%s): its key type is not derived: %s", name, fn, v, why)
			case len(args) != 1:
				return State{}, fmt.Errorf("state %s of %s (%s): %d arguments, want one", name, fn, v, len(args))
			}
			col := strings.TrimSuffix(args[0], " NOT NULL")
			keyOf = declared(func() (*serializer.Snapshot, error) { return serializer.DeclareExternal(col + " NOT NULL") },
				"MIN/MAX over retractions of a "+col+" column")
		default:
			return State{}, fmt.Errorf("state %s of %s (%s): statecraft declares the data views of DISTINCT, MIN and MAX over retractions and COLLECT only", name, fn, v)
		}
	default:
		return State{}, fmt.Errorf("state %s (%s): statecraft declares the data views of DISTINCT, MIN and MAX over retractions and COLLECT only", name, v)
	}
	if v.Kind != "Map" || len(v.Elems) != 2 {
		value, err := external(v, valueNull)
		if err != nil || !strings.HasSuffix(name, "_null_state") {
			return State{}, fmt.Errorf("state %s (%s): not a view statecraft declares (%v)", name, v, err)
		}
		return State{Name: name, Kind: "value", ValueType: value}, nil
	}
	if keyOf == nil {
		keyOf = func() (*Type, error) { return external(v.Elems[0], keyNull) }
	}
	key, err := keyOf()
	if err != nil {
		return State{}, err
	}
	value, err := external(v.Elems[1], valueNull)
	if err != nil {
		return State{}, err
	}
	return State{Name: name, Kind: "map", UserKeyType: key, ValueType: value}, nil
}

// heapOrder is the order the hashmap backend writes keyed states in: its registered states are a
// java.util.HashMap (HeapKeyedStateBackend), iterated bucket by bucket (String.hashCode spread
// by h ^ h>>>16, masked by the table size: 16, doubled while the states exceed 3/4 of it), states
// of one bucket in registration order. names are in registration order. A canonical savepoint
// restores whatever its order; this one makes the header Flink's byte for byte.
func heapOrder(names []string) []string {
	size := 16
	for len(names) > size*3/4 {
		size *= 2
	}
	bucket := func(s string) int {
		h := uint32(keygroup.StringHash(s))
		return int((h ^ h>>16) & uint32(size-1))
	}
	out := slices.Clone(names)
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(bucket(a), bucket(b)) })
	return out
}
