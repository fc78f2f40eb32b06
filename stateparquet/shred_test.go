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
