package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/savepoint"
)

// dumpExpectation is the part of <name>.expect.json the dump is compared with.
type dumpExpectation struct {
	Job         string `json:"job"`
	Backend     string `json:"backend"`
	Format      string `json:"format"`
	Compression bool   `json:"compression"`
	Operators   []struct {
		UID         *string `json:"uid"`
		UIDHash     string  `json:"uidHash"`
		KeyedStates []struct {
			Name    string            `json:"name"`
			Kind    string            `json:"kind"`
			TTL     bool              `json:"ttl"`
			Entries []json.RawMessage `json:"entries"`
		} `json:"keyedStates"`
		Timers         []json.RawMessage `json:"timers"`
		OperatorStates []struct {
			Name    string            `json:"name"`
			Mode    string            `json:"mode"`
			Entries []json.RawMessage `json:"entries"`
		} `json:"operatorStates"`
	} `json:"operators"`
}

func fixtureExpectations(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "savepoints", "*.expect.json"))
	if len(files) == 0 {
		t.Skip("no savepoint fixtures in testdata/savepoints (generate them with the oracle: testdata/oracle/run.sh savepoints)")
	}
	return files
}

// canonical re-encodes a JSON value with sorted object keys and normalised numbers, so that Go's
// and Jackson's spellings (1 and 1.0, exponent forms) compare equal.
func canonical(raw []byte) (string, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "", err
	}
	v = normNumbers(v)
	b, err := json.Marshal(v) // maps marshal with sorted keys
	return string(b), err
}

func normNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return json.Number(strconv.FormatInt(i, 10))
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return x
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return json.Number(strconv.FormatInt(int64(f), 10))
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
	case map[string]any:
		for k, e := range x {
			x[k] = normNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normNumbers(e)
		}
	}
	return v
}

// pick re-encodes selected fields of a record as the dumpExpectation's entry shape.
func pick(t *testing.T, v any, fields ...string) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %#v: %v", v, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]json.RawMessage{}
	for _, f := range fields {
		if r, ok := m[f]; ok {
			out[f] = r
		} else {
			out[f] = json.RawMessage("null")
		}
	}
	b, _ = json.Marshal(out)
	s, err := canonical(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// set turns canonical lines into a sorted, de-duplicated list. The oracle drops identical lines
// (the State Processor API may report a key twice, union and broadcast state once per subtask),
// so both sides are compared as sets.
func set(lines []string) []string {
	sort.Strings(lines)
	out := lines[:0]
	for i, l := range lines {
		if i == 0 || l != lines[i-1] {
			out = append(out, l)
		}
	}
	return out
}

func diffSets(what string, got, want []string) []string {
	got, want = set(got), set(want)
	if strings.Join(got, "\n") == strings.Join(want, "\n") {
		return nil
	}
	g := map[string]bool{}
	for _, l := range got {
		g[l] = true
	}
	w := map[string]bool{}
	for _, l := range want {
		w[l] = true
	}
	var missing, extra []string
	for _, l := range want {
		if !g[l] {
			missing = append(missing, l)
		}
	}
	for _, l := range got {
		if !w[l] {
			extra = append(extra, l)
		}
	}
	return []string{fmt.Sprintf("%s: %d records, want %d\nmissing (first 5): %s\nextra (first 5): %s", what, len(got), len(want),
		strings.Join(missing[:min(5, len(missing))], "\n  "), strings.Join(extra[:min(5, len(extra))], "\n  "))}
}

// TestDumpMatchesOracle compares `savepoint dump` with what Flink's State Processor API read from
// every fixture: every keyed-state entry, timer and operator-state element of every operator.
func TestDumpMatchesOracle(t *testing.T) {
	for _, ef := range fixtureExpectations(t) {
		name := strings.TrimSuffix(filepath.Base(ef), ".expect.json")
		t.Run(name, func(t *testing.T) {
			exp := readDumpExpectation(t, ef)
			for _, p := range compareDump(t, filepath.Join(filepath.Dir(ef), name), exp) {
				t.Error(p)
			}
		})
	}
}

// TestDumpComparisonDetectsDifferences makes sure the comparison above can fail: a changed value,
// a dropped entry and a changed timer in a real expectation must each be reported.
func TestDumpComparisonDetectsDifferences(t *testing.T) {
	ef := fixtureExpectations(t)[0]
	dir := strings.TrimSuffix(ef, ".expect.json")
	for _, tc := range []struct {
		name   string
		mutate func(e *dumpExpectation) bool
	}{
		{"changed value", func(e *dumpExpectation) bool {
			for i := range e.Operators {
				for j := range e.Operators[i].KeyedStates {
					if es := e.Operators[i].KeyedStates[j].Entries; len(es) > 0 {
						es[0] = json.RawMessage(strings.Replace(string(es[0]), `"value"`, `"value":"tampered","x"`, 1))
						return true
					}
				}
			}
			return false
		}},
		{"dropped entry", func(e *dumpExpectation) bool {
			for i := range e.Operators {
				for j := range e.Operators[i].KeyedStates {
					if es := e.Operators[i].KeyedStates[j].Entries; len(es) > 0 {
						e.Operators[i].KeyedStates[j].Entries = es[1:]
						return true
					}
				}
			}
			return false
		}},
		{"changed timer", func(e *dumpExpectation) bool {
			for i := range e.Operators {
				if ts := e.Operators[i].Timers; len(ts) > 0 {
					ts[0] = json.RawMessage(strings.Replace(string(ts[0]), `"timestamp"`, `"timestamp":1,"x"`, 1))
					return true
				}
			}
			return false
		}},
	} {
		exp := readDumpExpectation(t, ef)
		if !tc.mutate(&exp) {
			t.Logf("%s: %s has nothing to mutate", tc.name, ef)
			continue
		}
		if p := compareDump(t, dir, exp); len(p) == 0 {
			t.Errorf("%s: comparison reported no difference", tc.name)
		}
	}
}

func readDumpExpectation(t *testing.T, path string) dumpExpectation {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var exp dumpExpectation
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return exp
}

// compareDump dumps every operator of the expectation from the savepoint in dir and returns the
// differences.
func compareDump(t *testing.T, dir string, exp dumpExpectation) []string {
	t.Helper()
	var problems []string
	sp, err := savepoint.Open(dir)
	if err != nil {
		return []string{err.Error()}
	}
	defer sp.Close()
	for _, eo := range exp.Operators {
		op, err := findOperator(sp.Metadata, "hash:"+eo.UIDHash)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		var recs []dumpRecord
		err = dumpOperator(sp, op, "", func(r dumpRecord) error {
			recs = append(recs, r)
			return nil
		})
		if err != nil {
			problems = append(problems, fmt.Sprintf("operator %s: %v", eo.UIDHash, err))
			continue
		}
		label := fmt.Sprintf("operator %s", eo.UIDHash)
		if eo.UID != nil {
			label = "operator uid " + *eo.UID
		}
		// The oracle drops identical lines, so the comparison below is by sets; a key (with its
		// namespace and map key) or a timer must still appear only once in a keyed dump.
		slots := map[string]bool{}
		for _, r := range recs {
			if r.Keyed == nil {
				continue
			}
			slot := r.Keyed.State + "|" + pick(t, r.Keyed, "key", "namespace", "userKey", "kind", "timestamp")
			if slots[slot] {
				problems = append(problems, fmt.Sprintf("%s: %s appears twice", label, slot))
			}
			slots[slot] = true
		}
		for _, ks := range eo.KeyedStates {
			var got, want []string
			for _, r := range recs {
				if r.Keyed != nil && r.Keyed.Kind != "timer" && r.Keyed.State == ks.Name {
					got = append(got, pick(t, r.Keyed, "key", "namespace", "userKey", "value"))
					if ks.TTL && r.Keyed.TTL == nil {
						problems = append(problems, fmt.Sprintf("%s state %s: TTL state without ttlTimestamp", label, ks.Name))
					}
				}
			}
			for _, e := range ks.Entries {
				want = append(want, mustCanonical(t, e))
			}
			problems = append(problems, diffSets(label+" keyed state "+ks.Name, got, want)...)
		}
		var got, want []string
		for _, r := range recs {
			if r.Keyed != nil && r.Keyed.Kind == "timer" {
				got = append(got, pick(t, r.Keyed, "kind", "key", "namespace", "timestamp"))
			}
		}
		for _, e := range eo.Timers {
			want = append(want, mustCanonical(t, e))
		}
		problems = append(problems, diffSets(label+" timers", got, want)...)
		for _, os := range eo.OperatorStates {
			var got, want []string
			for _, r := range recs {
				if r.Operator != nil && r.Operator.State == os.Name {
					if r.Operator.Mode != os.Mode {
						problems = append(problems, fmt.Sprintf("%s operator state %s: mode %s, want %s", label, os.Name, r.Operator.Mode, os.Mode))
					}
					if os.Mode == "broadcast" {
						got = append(got, pick(t, r, "key", "value"))
					} else {
						got = append(got, pick(t, r, "value"))
					}
				}
			}
			for _, e := range os.Entries {
				want = append(want, mustCanonical(t, e))
			}
			problems = append(problems, diffSets(label+" operator state "+os.Name, got, want)...)
		}
	}
	return problems
}

func mustCanonical(t *testing.T, raw []byte) string {
	t.Helper()
	c, err := canonical(raw)
	if err != nil {
		t.Fatalf("expectation entry %s: %v", raw, err)
	}
	return c
}

// TestDumpCLI runs the command as a user would: selectors, --state, the three formats and the
// refusals with their exit codes.
func TestDumpCLI(t *testing.T) {
	fixtureExpectations(t)
	dir := filepath.Join("..", "..", "testdata", "savepoints", "keyed-hashmap")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("fixture keyed-hashmap missing")
	}
	exp := readDumpExpectation(t, dir+".expect.json")
	var hash string
	for _, o := range exp.Operators {
		if o.UID != nil && *o.UID == "int-keyed" {
			hash = o.UIDHash
		}
	}
	if hash == "" {
		t.Fatal("keyed-hashmap expectation has no operator int-keyed")
	}
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		contains []string
		lines    int // expected stdout lines, -1 = don't care
	}{
		{"uid selector, one state", []string{dir, "--operator", "uid:int-keyed", "--state", "count"}, exitOK, []string{`"state":"count"`}, 12},
		{"hash selector", []string{dir, "--operator", "hash:" + strings.ToUpper(hash), "--state", "count"}, exitOK, []string{`"state":"count"`}, 12},
		{"csv", []string{dir, "--operator", "uid:int-keyed", "--state", "names", "--format", "csv"}, exitOK, []string{"state,subtask,keyGroup,key", `names,,`}, 13},
		{"table", []string{"--format", "table", dir, "--state", "seen", "--operator", "uid:int-keyed"}, exitOK, []string{"userKey", "seen"}, 13},
		{"timer state", []string{dir, "--operator", "uid:int-keyed", "--state", "_timer_state/event_user-timers"}, exitOK, []string{`"kind":"event"`, `"timestamp":`}, -1},
		{"unknown operator", []string{dir, "--operator", "uid:nope"}, exitFailure, []string{"no such operator", "uid:int-keyed"}, 0},
		{"bad selector", []string{dir, "--operator", "int-keyed"}, exitFailure, []string{"uid:NAME or hash:HEX"}, 0},
		{"unknown state", []string{dir, "--operator", "uid:int-keyed", "--state", "nope"}, exitFailure, []string{`"nope"`}, 0},
		{"bad format", []string{dir, "--operator", "uid:int-keyed", "--format", "xml"}, exitFailure, []string{"jsonl, csv, table or parquet"}, 0},
		{"missing savepoint", []string{dir + "-missing", "--operator", "uid:int-keyed"}, exitFailure, []string{"missing"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"savepoint", "dump"}, tc.args...), &stdout, &stderr)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, stderr.String())
			}
			all := stdout.String() + stderr.String()
			for _, c := range tc.contains {
				if !strings.Contains(all, c) {
					t.Errorf("output lacks %q:\n%s", c, all)
				}
			}
			if tc.lines >= 0 {
				if n := strings.Count(stdout.String(), "\n"); n != tc.lines {
					t.Errorf("%d output lines, want %d:\n%s", n, tc.lines, stdout.String())
				}
			}
		})
	}
}

// TestDumpCheckpointMatchesOracle: `savepoint dump` of a job's retained incremental RocksDB
// checkpoint directory (opened at its latest complete chk-N, its absolute paths mapped onto where
// the directory is now) equals the State Processor API's reading of that checkpoint.
func TestDumpCheckpointMatchesOracle(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "checkpoints", "native-chain")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("fixture: %v", err)
	}
	exp := readDumpExpectation(t, dir+".expect.json")
	for _, p := range compareDump(t, dir, exp) {
		t.Error(p)
	}
}
