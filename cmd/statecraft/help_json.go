package main

import (
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"github.com/statecraft/statecraft/bridge"
	"github.com/statecraft/statecraft/migrate"
	"github.com/statecraft/statecraft/plan"
)

// `statecraft help json`: the shape of every JSON document statecraft prints or writes, derived
// by reflection from the very Go types that are encoded, so it cannot drift from them;
// TestJSONSchemasMatchOutput also checks real output of every command against it.

// jsonDoc is one JSON output: the command that prints it and the type that is encoded.
type jsonDoc struct {
	command string
	typ     reflect.Type
	note    string
}

// The shapes of `savepoint dump --format jsonl` lines; dumpRecord and keyed.Record write them by
// hand (MarshalJSON), so they are spelled out here, and the test holds them to real output.
type (
	dumpKeyedLine struct {
		Operator  string `json:"operator,omitempty"` // only without --operator (all operators)
		State     string `json:"state"`
		KeyGroup  int    `json:"keyGroup"`
		Key       any    `json:"key"`
		Namespace any    `json:"namespace"`
		UserKey   any    `json:"userKey"`
		Value     any    `json:"value"`
		TTL       any    `json:"ttlTimestamp,omitempty"`
	}
	dumpTimerLine struct {
		Operator  string `json:"operator,omitempty"`
		State     string `json:"state"`
		KeyGroup  int    `json:"keyGroup"`
		Kind      string `json:"kind"`
		Key       any    `json:"key"`
		Namespace any    `json:"namespace"`
		Timestamp int64  `json:"timestamp"`
	}
	dumpOperatorLine struct {
		Operator string `json:"operator,omitempty"`
		State    string `json:"state"`
		Mode     string `json:"mode"`
		Subtask  int32  `json:"subtask"`
		Index    int    `json:"index"`
		Key      any    `json:"key,omitempty"`
		Value    any    `json:"value"`
	}
	// impactJSON is `plan ttl impact --json`.
	impactJSON = struct {
		Savepoint string               `json:"savepoint"`
		Plan      string               `json:"plan"`
		At        int64                `json:"atMillis"`
		States    []bridge.StateImpact `json:"states"`
	}
	// offsetsJSON is `savepoint offsets --json`.
	offsetsJSON struct {
		Sources []offsetsSource `json:"sources"`
	}
	// diffUpgradeJSON is `plan diff --json --savepoint`.
	diffUpgradeJSON = struct {
		Diff    *plan.DiffReport `json:"diff"`
		Upgrade upgradeJSON      `json:"upgrade"`
	}
)

var jsonDocs = []jsonDoc{
	{"plan ttl list --json", reflect.TypeFor[listOutput](), ""},
	{"plan validate --json", reflect.TypeFor[validateOutput](), ""},
	{"plan diff --json", reflect.TypeFor[*plan.DiffReport](), ""},
	{"plan diff --json --savepoint SP", reflect.TypeFor[diffUpgradeJSON](), ""},
	{"plan upgrade --json", reflect.TypeFor[upgradeJSON](), ""},
	{"plan uids --json", reflect.TypeFor[uidsOutput](), ""},
	{"plan ttl impact --json", reflect.TypeFor[impactJSON](), ""},
	{"savepoint inspect --json", reflect.TypeFor[inspectOutput](), ""},
	{"savepoint check --json", reflect.TypeFor[checkOutput](), ""},
	{"savepoint offsets --json", reflect.TypeFor[offsetsJSON](), ""},
	{"savepoint stats --json", reflect.TypeFor[statsJSON](), "bytes of uncompressed key-group blocks; key: a decoded key"},
	{"savepoint diff --json", reflect.TypeFor[diffJSON](), "match is id, name, only in A or only in B; samples are decoded (old: A's value, new: B's)"},
	{"savepoint dump --format jsonl (keyed state)", reflect.TypeFor[dumpKeyedLine](), "one JSON object per line; operator (uid:NAME or hash:HEX) only without --operator; list state: value is the list; values are decoded Java values ({serializer, base64} when unknown)"},
	{"savepoint dump --format jsonl (timers)", reflect.TypeFor[dumpTimerLine](), "kind is event or processing"},
	{"savepoint dump --format jsonl (operator state)", reflect.TypeFor[dumpOperatorLine](), "mode is split, union or broadcast; broadcast lines always carry key"},
	{"checkpoint list --json", reflect.TypeFor[checkpointListJSON](), "time: RFC 3339; size: bytes in chk-N/; stateSize: from _metadata"},
	{"checkpoint gc --json", reflect.TypeFor[checkpointGCJSON](), "paths relative to DIR"},
	{"migrate ... --report FILE", reflect.TypeFor[*migrate.Report](), "also written by --dry-run"},
	{"savepoint ... --report FILE", reflect.TypeFor[*migrate.Report](), "savepoint create: the migrate report of its one step"},
}

func init() {
	registerTopic(helpTopic{name: "json", usage: "the JSON documents of --json, dump --format jsonl and migrate --report", write: writeJSONHelp})
}

func writeJSONHelp(w io.Writer) error {
	fmt.Fprint(w, `JSON OUTPUT

Every --json output is one JSON document (indented); 'savepoint dump --format jsonl' prints one
object per line. Shapes below: "key"? is left out when empty, T|null may be null, any is a
decoded value, {string: T} an object keyed by name, [T] a list. Fields may be added in later
versions; none are removed or change type without a note in the README.
`)
	for _, d := range jsonDocs {
		fmt.Fprintf(w, "\n%s", d.command)
		if d.note != "" {
			fmt.Fprintf(w, "  (%s)", d.note)
		}
		fmt.Fprintln(w)
		shapeOf(d.typ, nil).write(w, "  ")
	}
	return nil
}

// jsonShape is the shape of a JSON value as encoding/json writes a Go type.
type jsonShape struct {
	kind     string // object, map, array, string, number, boolean, any
	nullable bool
	fields   []jsonField // object
	elem     *jsonShape  // array, map
	name     string      // the Go type, for a recursive reference
}

type jsonField struct {
	name     string
	optional bool
	shape    *jsonShape
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// shapeOf follows encoding/json's rules: exported fields, json tags, embedded structs flattened,
// pointers nullable, []byte as a base64 string. A type with its own MarshalJSON is sampled with
// its zero value.
func shapeOf(t reflect.Type, seen []reflect.Type) *jsonShape {
	nullable := false
	for t.Kind() == reflect.Pointer {
		nullable, t = true, t.Elem()
	}
	for _, s := range seen {
		if s == t {
			return &jsonShape{kind: "object", name: t.Name(), nullable: nullable}
		}
	}
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) || t.Implements(textMarshaler) {
		b, err := json.Marshal(reflect.New(t).Elem().Interface())
		var v any
		if err != nil || json.Unmarshal(b, &v) != nil {
			return &jsonShape{kind: "any"}
		}
		s := shapeOfValue(v)
		s.nullable = s.nullable || nullable
		return s
	}
	s := &jsonShape{nullable: nullable}
	switch t.Kind() {
	case reflect.String:
		s.kind = "string"
	case reflect.Bool:
		s.kind = "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		s.kind = "number"
	case reflect.Interface:
		s.kind = "any"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			s.kind = "string"
			break
		}
		s.kind, s.nullable, s.elem = "array", s.nullable || t.Kind() == reflect.Slice, shapeOf(t.Elem(), seen)
	case reflect.Map:
		s.kind, s.nullable, s.elem = "map", true, shapeOf(t.Elem(), seen)
	case reflect.Struct:
		s.kind = "object"
		s.fields = structFields(t, append(seen, t))
	default:
		s.kind = "any"
	}
	return s
}

func structFields(t reflect.Type, seen []reflect.Type) []jsonField {
	var out []jsonField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				out = append(out, structFields(et, seen)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		jf := jsonField{name: name, shape: shapeOf(f.Type, seen)}
		// An empty value of an omitempty field is left out, never written as null.
		if strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,") {
			jf.optional, jf.shape.nullable = true, false
		}
		out = append(out, jf)
	}
	return out
}

// shapeOfValue is the shape of a decoded sample (for types that marshal themselves).
func shapeOfValue(v any) *jsonShape {
	switch x := v.(type) {
	case string:
		return &jsonShape{kind: "string"}
	case float64:
		return &jsonShape{kind: "number"}
	case bool:
		return &jsonShape{kind: "boolean"}
	case map[string]any:
		s := &jsonShape{kind: "object"}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s.fields = append(s.fields, jsonField{name: k, shape: &jsonShape{kind: "any"}})
		}
		return s
	}
	return &jsonShape{kind: "any"}
}

// write prints the shape as an indented outline.
func (s *jsonShape) write(w io.Writer, indent string) {
	fmt.Fprint(w, indent+s.text(indent)+"\n")
}

func (s *jsonShape) text(indent string) string {
	var t string
	switch s.kind {
	case "object":
		if s.name != "" && s.fields == nil {
			t = s.name + " (as above)"
			break
		}
		var b strings.Builder
		b.WriteString("{\n")
		for _, f := range s.fields {
			q := ""
			if f.optional {
				q = "?"
			}
			fmt.Fprintf(&b, "%s  %q%s: %s\n", indent, f.name, q, f.shape.text(indent+"  "))
		}
		b.WriteString(indent + "}")
		t = b.String()
	case "array":
		t = "[" + s.elem.text(indent) + "]"
	case "map":
		t = "{string: " + s.elem.text(indent) + "}"
	default:
		t = s.kind
	}
	if s.nullable && s.kind != "any" {
		t += "|null"
	}
	return t
}

// check reports where v (decoded JSON) does not have the shape: an unknown key, a missing
// required key, or a value of another kind.
func (s *jsonShape) check(v any, path string) []string {
	if v == nil {
		if s.nullable || s.kind == "any" {
			return nil
		}
		return []string{path + ": null, want " + s.kind}
	}
	var errs []string
	switch s.kind {
	case "any":
	case "string", "number", "boolean":
		got := map[bool]string{true: s.kind}[jsonKind(v) == s.kind]
		if got == "" {
			errs = append(errs, fmt.Sprintf("%s: %s, want %s", path, jsonKind(v), s.kind))
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %s, want array", path, jsonKind(v))}
		}
		for i, e := range a {
			errs = append(errs, s.elem.check(e, fmt.Sprintf("%s[%d]", path, i))...)
		}
	case "map":
		m, ok := v.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %s, want object", path, jsonKind(v))}
		}
		for k, e := range m {
			errs = append(errs, s.elem.check(e, path+"."+k)...)
		}
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %s, want object", path, jsonKind(v))}
		}
		if s.fields == nil && s.name != "" {
			return nil // a recursive reference: checked where it was first described
		}
		known := map[string]bool{}
		for _, f := range s.fields {
			known[f.name] = true
			e, ok := m[f.name]
			if !ok {
				if !f.optional {
					errs = append(errs, path+"."+f.name+": missing")
				}
				continue
			}
			errs = append(errs, f.shape.check(e, path+"."+f.name)...)
		}
		for k := range m {
			if !known[k] {
				errs = append(errs, path+"."+k+": not in the documented shape")
			}
		}
	}
	return errs
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64, json.Number:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
