package spdiff

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/statecraft/statecraft/statecore/serializer"
)

// Operator is what the metadata and state headers say about one operator of one side.
type Operator struct {
	ID             string
	UID            string
	Name           string
	Parallelism    int32
	MaxParallelism int32
	KeySerializer  *serializer.Snapshot // nil without keyed state
	States         []StateMeta
}

// StateMeta is one state's kind and serializers (by the meta info's serializer key).
type StateMeta struct {
	Name        string
	Kind        string
	Serializers map[string]*serializer.Snapshot
}

// Change is one metadata field that differs.
type Change struct {
	Field string `json:"field"`
	A     string `json:"a"`
	B     string `json:"b"`
}

// CompareMeta lists the metadata fields of a and b that differ: UID, parallelism, max
// parallelism, the key serializer, and each state's presence, kind and serializers.
func CompareMeta(a, b *Operator) []Change {
	var out []Change
	add := func(field, x, y string) {
		if x != y {
			out = append(out, Change{field, x, y})
		}
	}
	add("operator id", a.ID, b.ID)
	add("uid", orNone(a.UID), orNone(b.UID))
	add("parallelism", fmt.Sprint(a.Parallelism), fmt.Sprint(b.Parallelism))
	add("max parallelism", fmt.Sprint(a.MaxParallelism), fmt.Sprint(b.MaxParallelism))
	if a.KeySerializer != nil && b.KeySerializer != nil {
		serializerChange(&out, "key serializer", a.KeySerializer, b.KeySerializer)
	}
	for _, sa := range a.States {
		i := slices.IndexFunc(b.States, func(s StateMeta) bool { return s.Name == sa.Name })
		if i < 0 {
			out = append(out, Change{"state " + sa.Name, sa.Kind, "(absent)"})
			continue
		}
		sb := b.States[i]
		add("state "+sa.Name+" kind", sa.Kind, sb.Kind)
		var keys []string
		for k := range sa.Serializers {
			keys = append(keys, k)
		}
		for k := range sb.Serializers {
			if sa.Serializers[k] == nil {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			serializerChange(&out, "state "+sa.Name+" "+k, sa.Serializers[k], sb.Serializers[k])
		}
	}
	for _, sb := range b.States {
		if !slices.ContainsFunc(a.States, func(s StateMeta) bool { return s.Name == sb.Name }) {
			out = append(out, Change{"state " + sb.Name, "(absent)", sb.Kind})
		}
	}
	return out
}

// serializerChange adds a change when the two snapshots differ in anything they record; it is
// shown by class and nested classes, with the whole snapshot's difference noted when the
// classes alone look the same (a POJO's fields, a version).
func serializerChange(out *[]Change, field string, a, b *serializer.Snapshot) {
	if content(a) == content(b) {
		return
	}
	da, db := Describe(a), Describe(b)
	if da == db {
		da, db = da+" (snapshot A)", db+" (snapshot B: differs in version or payload)"
	}
	*out = append(*out, Change{field, da, db})
}

// content is a snapshot's JSON without Offset and End (where it was read from, which a rewritten
// file may move), so that equal snapshots compare equal wherever they are.
func content(s *serializer.Snapshot) string {
	raw, _ := json.Marshal(s)
	var v any
	json.Unmarshal(raw, &v)
	var strip func(any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "Offset")
			delete(x, "End")
			for _, e := range x {
				strip(e)
			}
		case []any:
			for _, e := range x {
				strip(e)
			}
		}
	}
	strip(v)
	out, _ := json.Marshal(v)
	return string(out)
}

// Describe spells a serializer snapshot as its class and nested classes:
// MapSerializer<StringSerializer, IntSerializer>.
func Describe(s *serializer.Snapshot) string {
	if s == nil {
		return "(absent)"
	}
	var nested []string
	for _, n := range s.Nested {
		nested = append(nested, Describe(n))
	}
	for _, f := range s.PojoFields {
		if f.Snapshot != nil {
			nested = append(nested, f.Name+" "+Describe(f.Snapshot))
		}
	}
	// IntSerializer$IntSerializerSnapshot, TtlStateFactory$TtlSerializerSnapshot and
	// MapSerializerSnapshot name IntSerializer, TtlSerializer and MapSerializer.
	name := s.Short()
	if i := strings.LastIndexByte(name, '$'); i >= 0 {
		name = name[i+1:]
	}
	name = strings.TrimSuffix(name, "Snapshot")
	if len(nested) == 0 {
		return name
	}
	return name + "<" + strings.Join(nested, ", ") + ">"
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
