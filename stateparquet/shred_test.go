package stateparquet

import (
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/serializer"
)

// TestShredRefusesOtherTypes: a decoded value of another type than the snapshot's shape
// promised is an error naming the path and both types, and leaves no value behind (the
// conversions are the only guard between a decoder change and a malformed row).
func TestShredRefusesOtherTypes(t *testing.T) {
	i32 := &serializer.Shape{Kind: serializer.ShapeInt32}
	str := &serializer.Shape{Kind: serializer.ShapeString}
	for _, c := range []struct {
		name string
		sh   *serializer.Shape
		v    any
		want string
	}{
		{"int", i32, int64(1), "got int64, want int"},
		{"list", &serializer.Shape{Kind: serializer.ShapeList, Elem: i32}, "x", "got string, want a list"},
		{"list element", &serializer.Shape{Kind: serializer.ShapeList, Elem: i32}, []any{int32(1), "x"}, "element 1: got string, want int"},
		{"map", &serializer.Shape{Kind: serializer.ShapeMap, Key: str, Value: i32}, []any{}, "got []interface {}, want map entries"},
		{"map value", &serializer.Shape{Kind: serializer.ShapeMap, Key: str, Value: i32},
			[]serializer.MapEntry{{Key: "a", Value: "b"}}, "element 0: value: got string, want int"},
		{"tuple field", &serializer.Shape{Kind: serializer.ShapeStruct, Fields: []serializer.NamedShape{{Name: "f0", Shape: i32}, {Name: "f1", Shape: str}}},
			[]any{int32(1), int32(2)}, "f1: got int32, want string"},
		{"tuple arity", &serializer.Shape{Kind: serializer.ShapeStruct, Fields: []serializer.NamedShape{{Name: "f0", Shape: i32}}},
			[]any{int32(1), int32(2)}, "2 fields, want 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b rowBuf
			err := build(c.sh, 0).putOpt(&b, c.v, 0, 0, 0)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestShredLevels: the definition and repetition levels of a map stored as a value (a LIST of
// {key, value} groups under an optional column), entry by entry, for null, empty and
// two-entry maps and a null entry value. The 1-based levels follow the schema: value (optional)
// 1, list (repeated) 2, element (optional) 3, key/value (optional) 4.
func TestShredLevels(t *testing.T) {
	sh := &serializer.Shape{Kind: serializer.ShapeMap, Key: &serializer.Shape{Kind: serializer.ShapeString}, Value: &serializer.Shape{Kind: serializer.ShapeInt64}}
	type lv struct{ col, rep, def int }
	for _, c := range []struct {
		name string
		v    any
		want []lv
	}{
		{"null", nil, []lv{{0, 0, 0}, {1, 0, 0}}},
		{"empty", []serializer.MapEntry{}, []lv{{0, 0, 1}, {1, 0, 1}}},
		{"two", []serializer.MapEntry{{Key: "a", Value: int64(1)}, {Key: "b", Value: nil}},
			// shredded entry by entry; Write puts a row in column order afterwards
			[]lv{{0, 0, 4}, {1, 0, 4}, {0, 1, 4}, {1, 1, 3}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b rowBuf
			if err := build(sh, 0).putOpt(&b, c.v, 0, 0, 0); err != nil {
				t.Fatal(err)
			}
			var got []lv
			for _, v := range b.vals {
				got = append(got, lv{v.Column(), v.RepetitionLevel(), v.DefinitionLevel()})
			}
			if len(got) != len(c.want) {
				t.Fatalf("levels %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("levels %v, want %v", got, c.want)
				}
			}
		})
	}
}

// TestShredRowKind: a row group of a kinded row (SQL RowData; Row of Flink 1.11 on) has a
// rowKind leaf after f0..fN holding the row's kind, +I for a Row's plain fields; a row whose
// serializer writes no kind (a Row before 1.11) and a tuple have none.
func TestShredRowKind(t *testing.T) {
	i32 := &serializer.Shape{Kind: serializer.ShapeInt32}
	fields := []serializer.NamedShape{{Name: "f0", Shape: i32}, {Name: "f1", Shape: i32}}
	kinded := &serializer.Shape{Kind: serializer.ShapeRow, Fields: fields, RowKind: true}
	for _, c := range []struct {
		name   string
		sh     *serializer.Shape
		v      any
		leaves int
		kind   string // the rowKind leaf's value ("" = no such leaf)
	}{
		{"Row insert", kinded, []any{int32(1), nil}, 3, "+I"},
		{"Row -D", kinded, serializer.JavaRow{Kind: "-D", Fields: []any{int32(1), int32(2)}}, 3, "-D"},
		{"SQL +U", &serializer.Shape{Kind: serializer.ShapeRow, Fields: fields, RowKind: true, SQLRow: true},
			serializer.BinaryRow{Kind: "+U", Fields: []any{int32(1), int32(2)}}, 3, "+U"},
		{"Row before 1.11", &serializer.Shape{Kind: serializer.ShapeRow, Fields: fields}, []any{int32(1), int32(2)}, 2, ""},
		{"tuple", &serializer.Shape{Kind: serializer.ShapeStruct, Fields: fields}, []any{int32(1), int32(2)}, 2, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := build(c.sh, 0)
			if f.leaves != c.leaves {
				t.Fatalf("%d leaves, want %d", f.leaves, c.leaves)
			}
			var b rowBuf
			if err := f.putOpt(&b, c.v, 0, 0, 0); err != nil {
				t.Fatal(err)
			}
			if len(b.vals) != c.leaves {
				t.Fatalf("%d values, want %d", len(b.vals), c.leaves)
			}
			if c.kind == "" {
				return
			}
			// rowKind sorts after f0, f1: the last column, defined (value 1, rowKind 2).
			last := b.vals[len(b.vals)-1]
			if last.Column() != 2 || last.DefinitionLevel() != 2 || string(last.ByteArray()) != c.kind {
				t.Fatalf("rowKind leaf: column %d, def %d, %q; want column 2, def 2, %q", last.Column(), last.DefinitionLevel(), last.ByteArray(), c.kind)
			}
		})
	}
}
