package migrate

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/spec"
	"github.com/statecraft/statecraft/statecore/keygroup"
	"github.com/statecraft/statecraft/statecore/uid"
)

// declare writes the empty savepoint the declaration text declares and returns its directory.
func declare(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	f := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := spec.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := sp.WriteEmpty(empty); err != nil {
		t.Fatal(err)
	}
	return empty
}

// readSpec is testdata/specs/NAME.yaml.
func readSpec(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "specs", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// account is the oracle's Account POJO (dev.statecraft.oracle.savepoints.Account), the key of
// testdata/specs/pojo-keyed.yaml.
type account struct {
	Owner   string
	Balance int64
	Version int32
}

// hashCode is Account.hashCode: Objects.hash(owner, balance, version).
func (a account) hashCode() int32 {
	h := int32(1)
	for _, f := range []int32{keygroup.StringHash(a.Owner), keygroup.LongHash(a.Balance), a.Version} {
		h = 31*h + f
	}
	return h
}

func (a account) json() map[string]any {
	return map[string]any{"owner": a.Owner, "balance": a.Balance, "version": a.Version}
}

// pojoKeyedData is data for testdata/specs/pojo-keyed.yaml, as `savepoint dump` prints it
// (every key's keyGroup computed from the job's hashCode, since statecraft cannot run it), and
// the expectation of what a job restored from it must find: the values of each state kind, TTL
// values (any last-access time restores; the judge reads expired values too), and timers.
func pojoKeyedData(t *testing.T) (lines []string, e expectation) {
	t.Helper()
	const label, maxPar = "uid:pojo-keyed", 128
	type state struct {
		kind, valueType, userKeyType string
		ttl                          bool
		entries                      []any
	}
	states := map[string]*state{
		"profile": {kind: "value", valueType: "Row<String,Integer>", ttl: true},
		"events":  {kind: "list", valueType: "Row<Integer,String>"},
		"scores":  {kind: "map", valueType: "Long", userKeyType: "String"},
		"total":   {kind: "reducing", valueType: "Long"},
		"avg":     {kind: "aggregating", valueType: "Tuple2<Long,Long>"},
		"holder":  {kind: "value", valueType: "Account"},
	}
	var timers []any
	add := func(rec map[string]any) {
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	for i := range 6 {
		k := account{Owner: fmt.Sprintf("cust-%d", i), Balance: int64(100*i + 7), Version: int32(i % 3)}
		kg := keygroup.ForHash(k.hashCode(), maxPar)
		entry := func(name string, userKey, value any, extra ...any) {
			rec := map[string]any{"operator": label, "state": name, "keyGroup": kg, "key": k.json(), "namespace": nil, "userKey": userKey, "value": value}
			for j := 0; j+1 < len(extra); j += 2 {
				rec[extra[j].(string)] = extra[j+1]
			}
			add(rec)
			states[name].entries = append(states[name].entries, map[string]any{"key": k.json(), "namespace": nil, "userKey": userKey, "value": value})
		}
		var age any = int32(20 + i)
		if i == 2 {
			age = nil // a null Row field
		}
		entry("profile", nil, []any{fmt.Sprintf("name-%d", i), age}, "ttlTimestamp", int64(1_800_000_000_000+i))
		entry("events", nil, []any{[]any{int32(i), fmt.Sprintf("e%d", i)}, []any{int32(i + 10), nil}})
		entry("scores", "s0", int64(i*3))
		if i%2 == 0 {
			entry("scores", "s1", int64(-i))
		}
		entry("total", nil, int64(i*1000))
		entry("avg", nil, map[string]any{"f0": int64(i * 10), "f1": int64(i + 1)})
		entry("holder", nil, account{Owner: fmt.Sprintf("holder-%d", i), Balance: int64(-i), Version: 1}.json())
		timer := func(kind string, ts int64) {
			add(map[string]any{"operator": label, "state": "_timer_state/" + kind + "_user-timers", "keyGroup": kg, "kind": kind, "key": k.json(), "namespace": nil, "timestamp": ts})
			timers = append(timers, map[string]any{"key": k.json(), "kind": kind, "namespace": nil, "timestamp": ts})
		}
		timer("event", int64(2_000_000_000_000+i))
		if i%2 == 1 {
			timer("processing", int64(2_100_000_000_000+i))
		}
	}
	var keyed []any
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range states {
			if !yield(n) {
				return
			}
		}
	}) {
		s := states[name]
		var uk any
		if s.userKeyType != "" {
			uk = s.userKeyType
		}
		keyed = append(keyed, map[string]any{"name": name, "kind": s.kind, "keyType": "Account", "valueType": s.valueType,
			"userKeyType": uk, "ttl": s.ttl, "entries": s.entries})
	}
	hash := uid.Hash("pojo-keyed")
	e = expectation{
		"backend": "hashmap",
		"metadata": []any{map[string]any{"operatorName": "pojo-keyed", "operatorUid": "pojo-keyed", "operatorUidHash": hash,
			"parallelism": 2, "maxParallelism": maxPar, "subtaskStateCount": 2}},
		"operators": []any{map[string]any{"uid": "pojo-keyed", "uidHash": hash, "parallelism": 2, "maxParallelism": maxPar,
			"keyedStates": keyed, "timers": timers, "operatorStates": []any{}}},
	}
	// Through JSON and back with numbers as text, as loadExpect reads a fixture's.
	b, _ := json.Marshal(e)
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	e = expectation{}
	if err := d.Decode(&e); err != nil {
		t.Fatal(err)
	}
	return lines, e
}

// createPojoKeyed creates the savepoint testdata/specs/pojo-keyed.yaml declares, loaded with
// pojoKeyedData (each line passed through edit, if given), and returns it with the data's lines
// and the expectation.
func createPojoKeyed(t *testing.T, edit func(string) string) (dst string, lines []string, e expectation) {
	t.Helper()
	lines, e = pojoKeyedData(t)
	if edit != nil {
		for i := range lines {
			lines[i] = edit(lines[i])
		}
	}
	data := filepath.Join(t.TempDir(), "data.jsonl")
	if err := os.WriteFile(data, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dst, _ = run(t, declare(t, readSpec(t, "pojo-keyed")), Options{}, &Load{Data: data})
	return dst, lines, e
}

// canonicalJSON is line with its object keys sorted and numbers as written.
func canonicalJSON(t *testing.T, line string) string {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLoadPojoKeyed: the declared POJO-keyed savepoint holds exactly the data's entries and
// timers, each in the key group its line gives (the dump prints where they are).
func TestLoadPojoKeyed(t *testing.T) {
	dst, lines, _ := createPojoKeyed(t, nil)
	got := dumpKeyed(t, dst)
	for i := range got {
		got[i] = canonicalJSON(t, got[i])
	}
	for i := range lines {
		lines[i] = canonicalJSON(t, lines[i])
	}
	slices.Sort(got)
	slices.Sort(lines)
	if !slices.Equal(got, lines) {
		for _, l := range got {
			if !slices.Contains(lines, l) {
				t.Errorf("unexpected: %s", l)
			}
		}
		for _, l := range lines {
			if !slices.Contains(got, l) {
				t.Errorf("missing: %s", l)
			}
		}
		t.Fatalf("the savepoint holds %d records, the data %d", len(got), len(lines))
	}
}

// TestLoadDeclaredRefusals: values are checked against the declared types before anything is
// written; each bad line gives one error naming the file, line and field.
func TestLoadDeclaredRefusals(t *testing.T) {
	lines, _ := pojoKeyedData(t)
	pick := func(state string) string {
		for _, l := range lines {
			if strings.Contains(l, `"state":"`+state+`"`) {
				return l
			}
		}
		t.Fatalf("no %s line", state)
		return ""
	}
	total, holder, profile := pick("total"), pick("holder"), pick("profile")
	empty := declare(t, readSpec(t, "pojo-keyed"))
	for _, tc := range []struct {
		name, line, want string
	}{
		{"string for a Long", strings.Replace(total, `"value":0`, `"value":"0"`, 1), `data.jsonl:3: value: want an integer, got "0"`},
		{"missing POJO field", strings.Replace(holder, `"owner":"holder-0",`, ``, 1), `data.jsonl:3: value: field "owner" missing`},
		{"key of the wrong type", strings.Replace(total, `"key":{"balance":7,"owner":"cust-0","version":0}`, `"key":7`, 1), `data.jsonl:3: key: want an object, got 7`},
		{"POJO key without its key group", strings.Replace(total, `"keyGroup":`, `"keyGroupX":`, 1), `data.jsonl:3: keyGroup: want the key group (0..127) of the key`},
		{"Row field of the wrong type", strings.Replace(profile, `["name-0",20]`, `["name-0","20"]`, 1), `data.jsonl:3: value[1]: want an integer, got "20"`},
		{"key with a POJO field of the wrong type", strings.Replace(total, `"version":0}`, `"version":"0"}`, 1), `data.jsonl:3: key.version: want an integer, got "0"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.line == total || tc.line == holder || tc.line == profile {
				t.Fatal("the replacement did not apply: the test would prove nothing")
			}
			dir := t.TempDir()
			data := filepath.Join(dir, "data.jsonl")
			os.WriteFile(data, []byte(lines[0]+"\n"+lines[1]+"\n"+tc.line+"\n"), 0o644)
			dst := filepath.Join(dir, "out")
			_, err := Run(empty, dst, []Step{&Load{Data: data}}, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			t.Log(err)
			if _, err := os.Stat(dst); err == nil {
				t.Fatalf("%s exists after a failed load", dst)
			}
		})
	}
}

// csvColumns are the columns toCSV writes, in order.
var csvColumns = []string{"operator", "state", "keyGroup", "key", "namespace", "userKey", "value", "ttlTimestamp", "kind", "timestamp"}

// toCSV turns dumped lines into a CSV data file's text: text columns as they are, a string
// value as its text unless that reads as JSON, every other value as JSON, an absent field as
// an empty cell.
func toCSV(t *testing.T, lines []string) string {
	t.Helper()
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(csvColumns)
	for _, l := range lines {
		d := json.NewDecoder(strings.NewReader(l))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(csvColumns))
		for i, c := range csvColumns {
			v, ok := m[c]
			delete(m, c)
			switch s, isString := v.(string); {
			case !ok:
			case isString && (csvFields[c] || !json.Valid([]byte(s))):
				row[i] = s
			default:
				j, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				row[i] = string(j)
			}
		}
		if len(m) > 0 {
			t.Fatalf("fields %v of %s have no column", m, l)
		}
		w.Write(row)
	}
	w.Flush()
	return b.String()
}

// TestLoadCSV: a CSV data file (the dump's fields as columns) gives the same savepoint as the
// JSONL it was made from: for fixtures whose keys and values are numbers, strings (some that
// read as JSON), tuples, POJOs, lists, maps, Rows with nulls, TTL timestamps and timers.
func TestLoadCSV(t *testing.T) {
	for _, name := range []string{"types-hashmap", "evolve-hashmap", "keyed-ttl-collections"} {
		t.Run(name, func(t *testing.T) {
			src := fixture(t, name)
			want := dumpKeyed(t, src)
			data := filepath.Join(t.TempDir(), "data.csv")
			if err := os.WriteFile(data, []byte(toCSV(t, want)), 0o644); err != nil {
				t.Fatal(err)
			}
			dst, _ := run(t, src, Options{}, &Load{Data: data})
			got := dumpKeyed(t, dst)
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) || len(want) == 0 {
				t.Fatalf("loaded from CSV: %d records, the dump %d (or they differ)", len(got), len(want))
			}
		})
	}
}

// TestLoadCSVRefusals: a bad CSV file gives one error naming the file, the line (of the record's
// first line when a quoted cell spans lines) and the field.
func TestLoadCSVRefusals(t *testing.T) {
	src := fixture(t, "keyed-hashmap")
	head := "operator,state,key,namespace,userKey,value\n"
	good := "uid:int-keyed,count,4,,,3\n"
	for _, tc := range []struct {
		name, text, want string
	}{
		{"string for an Integer key", head + good + "uid:int-keyed,count,x4,,,3\n", `data.csv:3: key: want an integer, got "x4"`},
		{"string for a Long value", head + good + "uid:int-keyed,count,4,,,\"\"\"3\"\"\"\n", `data.csv:3: value: want an integer, got "3"`},
		{"after a cell spanning lines", head + "uid:int-keyed,names,4,,,\"[\n\"\"a\"\"]\"\n" + "uid:int-keyed,count,4,,,{}\n", `data.csv:4: value: want an integer`},
		{"unknown column", "operator,state,key,colour\n", `data.csv:1: column 4 "colour": not a field of`},
		{"no operator column", "state,key\n", `data.csv:1: no operator column`},
		{"short row", head + good + "uid:int-keyed,count,4\n", `data.csv:3: wrong number of fields`},
		{"empty file", "", `data.csv: empty CSV file`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "data.csv")
			os.WriteFile(data, []byte(tc.text), 0o644)
			dst := filepath.Join(dir, "out")
			_, err := Run(src, dst, []Step{&Load{Data: data}}, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if _, err := os.Stat(dst); err == nil {
				t.Fatalf("%s exists after a failed load", dst)
			}
		})
	}
}
