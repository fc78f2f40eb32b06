package bridge

import (
	"fmt"
	"strings"

	"github.com/statecraft/statecraft/plan"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// A state's value serializer is a tree: composites (Map, List, Tuple2) whose leaves are scalars
// (Long, Integer, Boolean) or RowDataSerializers; TTL wrappers may sit at any level (the join's
// Map<Row, TtlSerializer<Integer>>). Flink resolves a composite by resolving each nested
// serializer, and a nested RowData one as compareRow says, so the prediction walks the
// savepoint's tree and the plan's plan.ValueType side by side:
//
//	savepoint  MapSerializer<RowData[BIGINT, BIGINT, INT], Ttl<Integer>>
//	plan       Map<Row<BIGINT, BIGINT, INT>, Integer>
//	           key: rows compared field by field; value: TTL set aside, Integer = Integer
//
// A different class anywhere (Integer where the plan has Tuple2<Integer, Integer>) is
// incompatible: Flink has no migration between different serializer classes.

// compareValue predicts Flink's resolution of the state's value serializer s (TTL unwrapped)
// against the shape the plan declares.
func compareValue(state string, s *serializer.Snapshot, want plan.ValueType) TypeVerdict {
	if u := serializer.UnwrapTTL(s); want.Kind == "Row" && (u == nil || u.Kind == serializer.KindRowData) {
		return compareRow(state, u, want.Row, "")
	}
	v := TypeVerdict{State: state, Plan: []string{want.String()}, Savepoint: []string{snapshotShape(s)}}
	incompatible, unknown := walkShape("", s, want)
	switch {
	case incompatible != "":
		v.Verdict, v.Detail = TypesIncompatible, incompatible
	case unknown != "":
		v.Verdict, v.Detail = TypesNotChecked, unknown
	default:
		v.Verdict = TypesCompatible
	}
	return v
}

// walkShape returns the first difference that makes Flink refuse (incompatible), else the
// first part statecraft cannot compare (unknown); both empty when every part is equal.
func walkShape(path string, s *serializer.Snapshot, want plan.ValueType) (incompatible, unknown string) {
	s = serializer.UnwrapTTL(s)
	at := func() string {
		if path == "" {
			return "the value"
		}
		return path
	}
	if s == nil {
		return "", at() + ": the savepoint has no serializer snapshot"
	}
	if want.Kind == "Row" {
		r := compareRow("", s, want.Row, "")
		switch r.Verdict {
		case TypesIncompatible:
			return at() + ": " + r.Detail, ""
		case TypesNotChecked:
			if s.Kind != serializer.KindRowData {
				return fmt.Sprintf("%s is %s in the savepoint, a RowData row in the plan", at(), serializer.JavaType(s)), ""
			}
			return "", at() + ": " + r.Detail
		}
		return "", ""
	}
	got := leafType(s)
	if strings.HasPrefix(want.Kind, "ArrayData<") {
		e, ok := serializer.ArrayElementSQL(s)
		switch {
		case !ok && got == "ArrayDataSerializer":
			return "", at() + ": statecraft does not render the savepoint's array element type"
		case !ok || "ArrayData<"+e+">" != want.Kind:
			return fmt.Sprintf("%s is %s in the savepoint, %s in the plan", at(), snapshotShape(s), want.Kind), ""
		}
		return "", ""
	}
	if len(want.Elems) == 0 {
		if got != want.Kind {
			return fmt.Sprintf("%s is %s in the savepoint, %s in the plan", at(), got, want.Kind), ""
		}
		return "", ""
	}
	if !strings.HasPrefix(got, want.Kind+"<") || len(s.Nested) != len(want.Elems) {
		return fmt.Sprintf("%s is %s in the savepoint, %s in the plan", at(), snapshotShape(s), want.String()), ""
	}
	if want.Comparator != "" {
		got, ok := serializer.SortedMapComparator(s)
		switch {
		case !ok:
			unknown = at() + ": statecraft does not render the savepoint's sorted-map comparator"
		case got != want.Comparator:
			return fmt.Sprintf("%s: the sorted map's comparator is %s in the savepoint, %s in the plan", at(), got, want.Comparator), ""
		}
	}
	names := map[string][]string{"Map": {"map key", "map value"}, "SortedMap": {"map key", "map value"}, "List": {"list element"}}[want.Kind]
	for i, e := range want.Elems {
		name := fmt.Sprintf("%s field %d", want.Kind, i)
		if i < len(names) {
			name = names[i]
		}
		if path != "" {
			name = path + ", " + name
		}
		inc, unk := walkShape(name, s.Nested[i], e)
		if inc != "" {
			return inc, ""
		}
		if unknown == "" {
			unknown = unk
		}
	}
	return "", unknown
}

// snapshotShape renders a savepoint's value serializer in plan.ValueType's notation, TTL
// wrappers left out, RowData fields spelt out ("?" for one statecraft does not render).
func snapshotShape(s *serializer.Snapshot) string {
	s = serializer.UnwrapTTL(s)
	if s == nil {
		return "(none)"
	}
	if s.Kind == serializer.KindRowData {
		types, known := s.RowFieldTypes()
		return "Row<" + strings.Join(shown(types, known), ", ") + ">"
	}
	if e, ok := serializer.ArrayElementSQL(s); ok {
		return "ArrayData<" + e + ">"
	}
	got := leafType(s)
	i := strings.IndexByte(got, '<')
	if i < 0 || len(s.Nested) == 0 {
		return got
	}
	parts := make([]string, len(s.Nested))
	for j, n := range s.Nested {
		parts[j] = snapshotShape(n)
	}
	return got[:i] + "<" + strings.Join(parts, ", ") + ">"
}

// leafType is serializer.JavaType, with the precision (and scale) that SQL's DecimalData and
// TimestampData serializers keep in their snapshots and Flink compares on restore:
// DecimalData(10, 2), TimestampData(3) (the plan side: plan.distinctKeyShape).
func leafType(s *serializer.Snapshot) string {
	switch s.Kind {
	case serializer.KindDecimalData:
		return fmt.Sprintf("DecimalData(%d, %d)", s.Precision, s.Scale)
	case serializer.KindTimestampData:
		return fmt.Sprintf("TimestampData(%d)", s.Precision)
	}
	return serializer.JavaType(s)
}
