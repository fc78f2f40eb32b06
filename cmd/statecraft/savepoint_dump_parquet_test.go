package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// readParquetPy reads each Parquet file named on its command line with pyarrow (an independent
// reader from PyPI) and prints one JSON line per file: its path, the codecs of its column chunks
// as the footer names them, and its rows, with timestamps as epoch milliseconds, bytes as base64
// and NaN/infinities as Go spells them, so that the rows can be compared with `dump --format
// jsonl`.
const readParquetPy = `
import base64, json, math, sys
import pyarrow as pa, pyarrow.parquet as pq

def plain(t):
    if pa.types.is_timestamp(t):
        return pa.int64()
    if pa.types.is_list(t):
        return pa.list_(pa.field(t.value_field.name, plain(t.value_type)))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, plain(f.type)) for f in t])
    return t

def py(v):
    if isinstance(v, bytes):
        return base64.b64encode(v).decode()
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return "NaN" if math.isnan(v) else ("+Inf" if v > 0 else "-Inf")
    if isinstance(v, dict):
        return {k: py(x) for k, x in v.items()}
    if isinstance(v, list):
        return [py(x) for x in v]
    return v

for path in sys.argv[1:]:
    md = pq.ParquetFile(path).metadata
    codecs = sorted({md.row_group(g).column(c).compression for g in range(md.num_row_groups) for c in range(md.num_columns)})
    t = pq.read_table(path)
    t = t.cast(pa.schema([pa.field(f.name, plain(f.type), f.nullable) for f in t.schema]))
    print(json.dumps({"path": path, "codecs": codecs, "rows": [py(r) for r in t.to_pylist()]}))
`

// TestDumpParquetReadByPyarrow: for fixtures with SQL RowData (a keep-last dedup's +U rows
// among them), POJO, tuple, Row (of every RowKind), list and map state, TTL (value, list and map), windows and
// timers, native RocksDB savepoints and checkpoints, every operator's keyed states are exported
// with --format parquet -o DIR/, read back by pyarrow, and hold the same rows, in the same order
// and with the same values and row kinds, as `savepoint dump --format jsonl`; their pages are
// Snappy's by default, and one fixture is exported with each --compression, its codec the one
// pyarrow reads from the footer.
func TestDumpParquetReadByPyarrow(t *testing.T) {
	if err := exec.Command("python3", "-c", "import pyarrow").Run(); err != nil {
		if os.Getenv("STATECRAFT_ORACLE") != "" {
			t.Fatalf("pyarrow is missing (.ci/run installs it with pip): %v", err)
		}
		t.Skipf("pyarrow is missing (pip install pyarrow; .ci/run installs it): %v", err)
	}
	type export struct {
		fixture, op, dir string
		codec            string                       // as the footer names it
		want             map[string][]json.RawMessage // state -> jsonl records
	}
	var exports []export
	var files []string
	type run struct{ fixture, compression, codec string }
	var runs []run
	// The last: an incremental RocksDB checkpoint with file merging (a job directory), read as
	// every reading command reads one.
	for _, fx := range []string{"types-hashmap", "evolve-hashmap", "sql-group-aggregate", "window-hashmap", "keyed-ttl-collections", "native-ttl-inline", "../checkpoints/file-merged",
		"row-kinds-hashmap", "../upgrades/types-savepoints/dedup-rowtime-last"} {
		runs = append(runs, run{fx, "", "SNAPPY"}) // the default
	}
	for _, c := range []struct{ flag, codec string }{{"snappy", "SNAPPY"}, {"zstd", "ZSTD"}, {"gzip", "GZIP"}, {"none", "UNCOMPRESSED"}} {
		runs = append(runs, run{"evolve-hashmap", c.flag, c.codec})
	}
	for _, r := range runs {
		fx := r.fixture
		dir := filepath.Join("../../testdata/savepoints", fx)
		sp, err := savepoint.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range sp.Metadata.Operators {
			want := map[string][]json.RawMessage{}
			err := dumpOperator(sp, op, "", func(r dumpRecord) error {
				if r.Keyed != nil {
					b, err := json.Marshal(r)
					if err != nil {
						return err
					}
					want[r.Keyed.State] = append(want[r.Keyed.State], b)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			subs, closeAll, err := keyed.OpenSubtasks(sp, op)
			if err != nil {
				t.Fatal(err)
			}
			hasKeyed := false
			for _, s := range subs {
				hasKeyed = hasKeyed || len(s.Header.States) > 0
			}
			closeAll()
			if !hasKeyed {
				continue
			}
			out := t.TempDir() + "/"
			args := []string{"savepoint", "dump", "--operator", opLabel(op), "--format", "parquet", "-o", out, dir}
			if r.compression != "" {
				args = append(args, "--compression", r.compression)
			}
			code, stdout, errOut := runCLI(args...)
			if code != 0 {
				t.Fatalf("%s %s: exit %d: %s", fx, opLabel(op), code, errOut)
			}
			for name := range want {
				if !strings.Contains(stdout, "wrote "+filepath.Join(out, parquetFileName(name))) {
					t.Errorf("%s %s: no wrote line for state %s:\n%s", fx, opLabel(op), name, stdout)
				}
			}
			m, _ := filepath.Glob(filepath.Join(out, "*.parquet"))
			files = append(files, m...)
			exports = append(exports, export{fx, opLabel(op), out, r.codec, want})
		}
		sp.Close()
	}
	cmd := exec.Command("python3", append([]string{"-c", readParquetPy}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("pyarrow: %v\n%s", err, stderr.String())
	}
	got := map[string][]any{}
	codecs := map[string][]string{}
	for _, l := range bytes.Split(bytes.TrimSpace(stdout), []byte("\n")) {
		var f struct {
			Path   string
			Codecs []string
			Rows   []any
		}
		d := json.NewDecoder(bytes.NewReader(l))
		d.UseNumber()
		if err := d.Decode(&f); err != nil {
			t.Fatalf("pyarrow output: %v: %s", err, l)
		}
		got[f.Path], codecs[f.Path] = f.Rows, f.Codecs
	}
	rows, kinds, compressed := 0, map[string]bool{}, map[string]int{}
	for _, e := range exports {
		for state, want := range e.want {
			path := filepath.Join(e.dir, parquetFileName(state))
			rowsGot, ok := got[path]
			if !ok {
				t.Errorf("%s %s state %s: pyarrow read no %s", e.fixture, e.op, state, path)
				continue
			}
			if c := codecs[path]; len(c) != 1 || c[0] != e.codec {
				t.Errorf("%s %s state %s: column chunks compressed with %v, want %s", e.fixture, e.op, state, c, e.codec)
			} else {
				compressed[e.codec] += len(rowsGot)
			}
			if len(rowsGot) != len(want) {
				t.Errorf("%s %s state %s: pyarrow reads %d rows, jsonl has %d", e.fixture, e.op, state, len(rowsGot), len(want))
				continue
			}
			for i, w := range want {
				var wv map[string]any
				d := json.NewDecoder(bytes.NewReader(w))
				d.UseNumber()
				if err := d.Decode(&wv); err != nil {
					t.Fatal(err)
				}
				delete(wv, "state")
				for k := range wv {
					kinds[k] = true
				}
				if why := sameValue(wv, rowsGot[i]); why != "" {
					t.Errorf("%s %s state %s row %d: %s\n jsonl:   %s\n parquet: %v", e.fixture, e.op, state, i, why, w, rowsGot[i])
				}
				for _, m := range rowKindJSON.FindAllSubmatch(w, -1) {
					kinds[string(m[1])] = true
				}
				rows++
			}
		}
	}
	if rows < 100 || !kinds["ttlTimestamp"] || !kinds["userKey"] || !kinds["timestamp"] || !kinds["+U"] || !kinds["-U"] || !kinds["-D"] {
		t.Errorf("compared %d rows with fields %v: the fixtures no longer cover what this test is for", rows, kinds)
	}
	for _, c := range []string{"SNAPPY", "ZSTD", "GZIP", "UNCOMPRESSED"} {
		if compressed[c] < 10 {
			t.Errorf("%d rows read from %s pages (%v): the runs no longer cover every codec", compressed[c], c, compressed)
		}
	}
}

var (
	tupleField  = regexp.MustCompile(`^f[0-9]+$`)
	rowKindJSON = regexp.MustCompile(`"rowKind":"([^"]+)"`)
)

// sameValue compares a jsonl value with pyarrow's reading of its Parquet column, returning why
// they differ ("" when they do not). The shapes differ in known, lossless ways: Parquet has no
// column for a null (void) namespace, Row and SQL RowData values are groups f0..fN (and rowKind)
// where jsonl has arrays (or {rowKind, fields} for a kind other than +I), and an undecodable
// value is a STRING of the JSON jsonl prints inline.
func sameValue(want, got any) string {
	if want == nil || got == nil {
		if want == nil && got == nil {
			return ""
		}
		return fmt.Sprintf("%v vs %v", want, got)
	}
	if gm, ok := got.(map[string]any); ok && gm["rowKind"] != nil {
		kind, fields := any("+I"), want
		if wm, ok := want.(map[string]any); ok && len(wm) == 2 && wm["rowKind"] != nil && wm["fields"] != nil {
			kind, fields = wm["rowKind"], wm["fields"]
		}
		if gm["rowKind"] != kind {
			return fmt.Sprintf("rowKind: %v vs %v", kind, gm["rowKind"])
		}
		rest := maps.Clone(gm)
		delete(rest, "rowKind")
		return sameValue(fields, rest)
	}
	if s, ok := got.(string); ok {
		switch want.(type) {
		case map[string]any, []any:
			d := json.NewDecoder(strings.NewReader(s))
			d.UseNumber()
			var v any
			if err := d.Decode(&v); err != nil {
				return fmt.Sprintf("parquet string %q is not the JSON of %v", s, want)
			}
			return sameValue(want, v)
		case json.Number:
			if s == want.(json.Number).String() {
				return "" // a decimal as its exact text
			}
		}
	}
	wm, gm := asFields(want), asFields(got)
	if wm != nil && gm != nil {
		for k, w := range wm {
			if why := sameValue(w, gm[k]); why != "" {
				return k + ": " + why
			}
		}
		for k, g := range gm {
			if _, ok := wm[k]; !ok && g != nil {
				return k + ": only in parquet"
			}
		}
		return ""
	}
	wn, wok := want.(json.Number)
	gn, gok := got.(json.Number)
	if wok && gok {
		if wi, err := strconv.ParseInt(wn.String(), 10, 64); err == nil {
			if gi, err := strconv.ParseInt(gn.String(), 10, 64); err == nil && gi == wi {
				return ""
			}
		}
		wf, err1 := wn.Float64()
		gf, err2 := gn.Float64()
		if err1 == nil && err2 == nil && wf == gf {
			return ""
		}
		return fmt.Sprintf("%s vs %s", wn, gn)
	}
	if want != got {
		return fmt.Sprintf("%v (%T) vs %v (%T)", want, want, got, got)
	}
	return ""
}

// asFields views objects and arrays alike as named fields: array element i and tuple/row field
// fi are both "i"; null fields are left out (Parquet has no column for an always-null one).
func asFields(v any) map[string]any {
	out := map[string]any{}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if tupleField.MatchString(k) {
				k = k[1:]
			}
			if e != nil {
				out[k] = e
			}
		}
	case []any:
		for i, e := range x {
			if e != nil {
				out[strconv.Itoa(i)] = e
			}
		}
	default:
		return nil
	}
	return out
}

// TestDumpParquetArgs: -o and --compression go with --format parquet only, --compression names a
// codec, a FILE takes one state, operator state is refused by name, and a failed export leaves
// no file behind.
func TestDumpParquetArgs(t *testing.T) {
	sp := "../../testdata/savepoints/types-hashmap"
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--operator", "uid:long-keyed", "--format", "parquet", sp}, "-o FILE|DIR/ goes with --format parquet"},
		{[]string{"--format", "parquet", "-o", dir + "/", sp}, "--format parquet needs --operator"},
		{[]string{"--operator", "uid:long-keyed", "-o", dir + "/x.parquet", sp}, "-o FILE|DIR/ goes with --format parquet"},
		{[]string{"--operator", "uid:long-keyed", "--format", "parquet", "-o", dir + "/x.parquet", sp}, "give --state NAME for one file"},
		{[]string{"--operator", "uid:long-keyed", "--format", "parquet", "--state", "nosuch", "-o", dir + "/x.parquet", sp}, `--state "nosuch": operator uid:long-keyed has no state of that name (it has last`},
		{[]string{"--operator", "uid:long-keyed", "--format", "parquet", "--state", "last", "-o", dir + "/none/x.parquet", sp}, "does not exist"},
		{[]string{"--operator", "uid:source", "--format", "parquet", "-o", dir + "/", sp}, "has no state"},
		{[]string{"--operator", "uid:long-keyed", "--compression", "zstd", sp}, "--compression is for --format parquet"},
		{[]string{"--compression", "none", "--format", "csv", sp}, "--compression is for --format parquet"},
		{[]string{"--operator", "uid:long-keyed", "--format", "parquet", "--compression", "lz4", "-o", dir + "/", sp}, `--compression "lz4": want one of snappy, zstd, gzip or none`},
	} {
		code, _, errOut := runCLI(append([]string{"savepoint", "dump"}, c.args...)...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 1 and %q", c.args, code, errOut, c.want)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 0 {
		t.Errorf("failed exports left %v", m)
	}
	code, out, errOut := runCLI("savepoint", "dump", "--operator", "uid:long-keyed", "--format", "parquet", "--state", "history", "-o", dir+"/h.parquet", sp)
	if code != 0 || !strings.Contains(out, "wrote "+dir+"/h.parquet (7 rows)") {
		t.Errorf("one state to a file: exit %d, %q %q", code, out, errOut)
	}
	// Readable by other programs and users, as statecraft's other outputs (CreateTemp makes 0600);
	// an existing file's mode is kept.
	if st, err := os.Stat(dir + "/h.parquet"); err != nil {
		t.Fatal(err)
	} else if st.Mode().Perm() != 0o644 {
		t.Errorf("h.parquet: mode %v, want 0644", st.Mode())
	}
	if err := os.Chmod(dir+"/h.parquet", 0o640); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI("savepoint", "dump", "--operator", "uid:long-keyed", "--format", "parquet", "--state", "history", "-o", dir+"/h.parquet", sp); code != 0 {
		t.Errorf("rewrite: exit %d, %q %q", code, out, errOut)
	}
	if st, err := os.Stat(dir + "/h.parquet"); err != nil {
		t.Fatal(err)
	} else if st.Mode().Perm() != 0o640 {
		t.Errorf("rewritten h.parquet: mode %v, want 0640 kept", st.Mode())
	}
	op := "../../testdata/savepoints/operator-state"
	code, _, errOut = runCLI("savepoint", "dump", "--operator", "uid:buffer-map", "--format", "parquet", "-o", dir+"/o/", op)
	if code != 1 || !strings.Contains(errOut, "Parquet export covers keyed state") {
		t.Errorf("operator state: exit %d, %q", code, errOut)
	}
}
