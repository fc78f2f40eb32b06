package migrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/statecraft/statecraft/statecore/metadata"
)

// workerOutput is what a worker made of lines: records, operator-state records, errors, and
// the counts and sums it holds.
func workerOutput(w *loadWorker, bt *loadBatch, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "err=%v\nout=%x\n", err, bt.out)
	for _, r := range bt.runs {
		fmt.Fprintf(&b, "run %s kg %d state %d end %d last %d n %d\n", Label(r.lo.op), r.kg, r.sid, r.end, r.last, r.n)
	}
	for _, o := range bt.opRecs {
		j, _ := json.Marshal(o.r.rec)
		fmt.Fprintf(&b, "oprec %s %s %s\n", Label(o.lo.op), o.r.where, j)
	}
	var ops []string
	for lo, wo := range w.per {
		ops = append(ops, fmt.Sprintf("%s counts %v sums %v kg %v", Label(lo.op), wo.counts, wo.sums, wo.kgBytes))
	}
	slices.Sort(ops)
	b.WriteString(strings.Join(ops, "\n"))
	return b.String()
}

// mutants are lines like line, each with one field changed, dropped, doubled or padded: the
// tokens the fast path takes and those it must leave to the decoding path.
func mutants(line string, rnd *rand.Rand) []string {
	var rec map[string]any
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber()
	if err := d.Decode(&rec); err != nil {
		return nil
	}
	order := []string{"operator", "state", "keyGroup", "key", "namespace", "userKey", "value", "ttlTimestamp", "kind", "timestamp", "mode"}
	for k := range rec {
		if !slices.Contains(order, k) {
			order = append(order, k)
		}
	}
	build := func(rec map[string]any, extra string) string {
		var parts []string
		for _, k := range order {
			if v, ok := rec[k]; ok {
				j, _ := json.Marshal(v)
				parts = append(parts, fmt.Sprintf("%q:%s", k, j))
			}
		}
		if extra != "" {
			parts = slices.Insert(parts, rnd.IntN(len(parts)+1), extra)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	alternates := []string{`null`, `0`, `-0`, `1`, `-1`, `1.5`, `1e3`, `127`, `128`, `-129`, `32768`, `2147483647`,
		`2147483648`, `-2147483649`, `9223372036854775807`, `9223372036854775808`, `-9223372036854775808`,
		`123456789012345678901`, `true`, `false`, `""`, `"x"`, `"GlobalWindow"`, `"a\"b"`, `"caf\u00e9"`, `"é"`,
		`[1]`, `[]`, `{}`, `{"start":0,"end":1}`, `"NaN"`, `1.7976931348623157e309`, `"uid:bench-keyed"`}
	out := []string{build(rec, ""), " " + build(rec, "") + " \r\n", build(rec, `"extra":1`), build(rec, `"extra":{"a":[1]}`)}
	for k := range rec {
		m := maps.Clone(rec)
		delete(m, k)
		out = append(out, build(m, ""))
		out = append(out, build(rec, fmt.Sprintf("%q:%s", k, alternates[rnd.IntN(len(alternates))])))
		for range 3 {
			m := maps.Clone(rec)
			m[k] = json.RawMessage(alternates[rnd.IntN(len(alternates))])
			out = append(out, build(m, ""))
		}
	}
	for _, k := range []string{"namespace", "userKey", "ttlTimestamp", "mode"} {
		if _, ok := rec[k]; !ok {
			out = append(out, build(rec, fmt.Sprintf("%q:%s", k, alternates[rnd.IntN(len(alternates))])))
		}
	}
	return append(out, strings.Replace(build(rec, ""), ":", " : ", 2), build(rec, "")[:len(line)/2], `null`, `{}`, `[]`)
}

// loadedParts prints the partitions, counts, sums and key-group sizes of the operators.
func loadedParts(operators []*metadata.OperatorState, ops map[string]*loadOp) string {
	var b bytes.Buffer
	for _, op := range operators {
		lo := ops[Label(op)]
		for i := range lo.parts {
			if p := &lo.parts[i]; p.buf != nil {
				fmt.Fprintf(&b, "%s %d %x\n", Label(lo.op), i, p.buf.Bytes())
			}
		}
		var sums []string
		for _, st := range slices.Sorted(maps.Keys(lo.sums)) {
			sums = append(sums, fmt.Sprintf("%s=%d", st, lo.counts[st]), fmt.Sprint(*lo.sums[st]))
		}
		fmt.Fprintln(&b, Label(op), sums, lo.kgBytes)
	}
	return b.String()
}

// TestLoadFastPathAgrees: a line encoded by its tokens (scanFlat, EncodeRaw) gives exactly what
// the decoding path gives: the same spill record, partition, counts and sums, or no fast
// encoding at all; for every record of every fixture Flink wrote, and for mutants of them (each
// field changed to tokens of other types and ranges, dropped, doubled), errors included. And
// the fast path is taken for the fixtures' basic types (else this would prove nothing).
func TestLoadFastPathAgrees(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "testdata", "savepoints", "*", "_metadata"))
	if len(dirs) == 0 {
		t.Skip("no savepoint fixtures")
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	fastTotal, templatedTotal := 0, 0
	for _, md := range dirs {
		name := filepath.Base(filepath.Dir(md))
		t.Run(name, func(t *testing.T) {
			sp := open(t, filepath.Dir(md))
			s := &session{src: sp, m: sp.Metadata}
			ops, labels, err := s.loadOps()
			if err != nil {
				t.Fatal(err)
			}
			lines := dumpKeyed(t, filepath.Dir(md))
			if len(lines) > 100 {
				rnd.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
				lines = lines[:100]
			}
			fast, slow, templated := 0, 0, 0
			for i, line := range lines {
				for j, m := range mutants(line, rnd) {
					fw := newLoadWorker("data.jsonl", ops, labels, true)
					sw := newLoadWorker("data.jsonl", ops, labels, true)
					fb, sb := &loadBatch{}, &loadBatch{}
					n := 1 + i*100 + j
					ferr := fw.record(fb, []byte(m), n)
					serr := sw.decoded(sb, []byte(m), fmt.Sprintf("data.jsonl:%d", n))
					if got, want := workerOutput(fw, fb, ferr), workerOutput(sw, sb, serr); got != want {
						t.Fatalf("line %s:\nwith the fast path:\n%s\ndecoded:\n%s", m, got, want)
					}
					// The same after the worker has learnt the shape of line (lineTemplate):
					// the mutant is read by the template when it matches.
					fw = newLoadWorker("data.jsonl", ops, labels, true)
					sw = newLoadWorker("data.jsonl", ops, labels, true)
					fb, sb = &loadBatch{}, &loadBatch{}
					ferr0 := fw.record(fb, []byte(line), n)
					serr0 := sw.decoded(sb, []byte(line), fmt.Sprintf("data.jsonl:%d", n))
					if (ferr0 == nil) != (serr0 == nil) {
						t.Fatalf("line %s: fast %v, decoded %v", line, ferr0, serr0)
					}
					fb.reset()
					sb.reset()
					var tr rawLine
					if fw.tmpls[1-fw.older].match([]byte(m), &tr) {
						templated++
					}
					ferr = fw.record(fb, []byte(m), n+1)
					serr = sw.decoded(sb, []byte(m), fmt.Sprintf("data.jsonl:%d", n+1))
					if got, want := workerOutput(fw, fb, ferr), workerOutput(sw, sb, serr); got != want {
						t.Fatalf("line %s after %s:\nwith the template:\n%s\ndecoded:\n%s", m, line, got, want)
					}
					var r rawLine
					if scanFlat([]byte(m), &r, nil) && fw.fast(&loadBatch{}) {
						fast++
					} else {
						slow++
					}
				}
			}
			t.Logf("%d lines encoded by the fast path, %d decoded; %d read by a template", fast, slow, templated)
			fastTotal += fast
			templatedTotal += templated
		})
	}
	if fastTotal == 0 || templatedTotal == 0 {
		t.Fatalf("%d lines took the fast path, %d were read by a template: both must be tested", fastTotal, templatedTotal)
	}
}

// TestScanFlat: the lines scanFlat takes are valid JSON objects whose fields it reads as
// encoding/json does; it refuses what it cannot read exactly.
func TestScanFlat(t *testing.T) {
	for _, tc := range []struct {
		line string
		ok   bool
		key  string
	}{
		{`{"operator":"uid:a","state":"s","key":5,"value":null}`, true, `5`},
		{` { "key" : -1.5e+3 , "x" : "y" } ` + "\n", true, `-1.5e+3`},
		{`{}`, true, ``},
		{`{"key":01}`, false, ``},
		{`{"key":1.}`, false, ``},
		{`{"key":-}`, false, ``},
		{`{"key":"a\nb"}`, false, ``},
		{"{\"key\":\"a\tb\"}", false, ``},
		{`{"key":"é"}`, false, ``},
		{`{"key":[1]}`, false, ``},
		{`{"key":1,"key":2}`, false, ``},
		{`{"x":1,"x":2,"key":true}`, true, `true`},
		{`{"key":nul}`, false, ``},
		{`{"key":1}x`, false, ``},
		{`{"key":1,}`, false, ``},
		{`{"key" 1}`, false, ``},
		{`{"key":1`, false, ``},
		{`null`, false, ``},
	} {
		var r rawLine
		ok := scanFlat([]byte(tc.line), &r, nil)
		if ok != tc.ok || ok && string(r.rec.Key) != tc.key {
			t.Errorf("scanFlat(%s) = %v, key %q; want %v, %q", tc.line, ok, r.rec.Key, tc.ok, tc.key)
		}
		if ok && !json.Valid([]byte(tc.line)) {
			t.Errorf("scanFlat took %s, which is not JSON", tc.line)
		}
	}
}

// TestScanFlatPrefix: scanning lines one after the other, each going on from the prefix it
// shares with an earlier one, gives what scanning each by itself gives: for the fixtures' lines
// in dump order (the prefix used) and their mutants (the prefix missed, refreshed, or shared by
// a line that then fails).
func TestScanFlatPrefix(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	var lines []string
	for _, name := range []string{"types-hashmap", "keyed-ttl-collections", "window-hashmap"} {
		for i, l := range dumpKeyed(t, fixture(t, name)) {
			lines = append(lines, l)
			if i%5 == 0 {
				lines = append(lines, mutants(l, rnd)...)
			}
		}
	}
	var pre flatPrefix
	used := 0
	for _, l := range lines {
		var a, b rawLine
		hit := len(pre.b) > 0 && strings.HasPrefix(l, string(pre.b)) && len(l) > len(pre.b)
		okA := scanFlat([]byte(l), &a, &pre)
		okB := scanFlat([]byte(l), &b, nil)
		if okA != okB || a.String() != b.String() {
			t.Fatalf("%s: with the prefix %q: %v %s; alone: %v %s", l, pre.b, okA, a.String(), okB, b.String())
		}
		if hit {
			used++
		}
	}
	if used < len(lines)/2 {
		t.Fatalf("the prefix was used for %d of %d lines", used, len(lines))
	}
}

// TestReadJSONLBlocks: records are put in the file's order and errors name the right line
// whatever the blocks: lines across block boundaries, a line longer than a block, blank lines,
// no final newline, and the first of two bad lines in different blocks is the one reported.
func TestReadJSONLBlocks(t *testing.T) {
	src := fixture(t, "keyed-hashmap")
	lines := dumpKeyed(t, src)
	long := strings.Replace(lines[0], `"operator"`, `"pad":"`+strings.Repeat("p", 5<<20)+`","operator"`, 1)
	var data []string
	for i := 0; len(data) < 60000; i++ {
		data = append(data, lines[i%len(lines)])
		if i%7 == 0 {
			data = append(data, "  ")
		}
		if i == 20000 {
			data = append(data, long)
		}
	}
	mapped := true // read by its mapping (a file), or else by Read (a stream)
	read := func(t *testing.T, text string) (string, error) { return readText(t, src, "data.jsonl", text, mapped) }
	text := strings.Join(data, "\n")
	// The same records one by one through the decoding path are the reference.
	ref, err := decodedOneByOne(t, src, "data.jsonl", linesOf(data))
	if err != nil {
		t.Fatal(err)
	}
	bad := slices.Clone(data)
	bad[30000] = `{"operator":"uid:nope"}`
	bad[59000] = `{"operator":`
	for _, mapped = range []bool{true, false} {
		got, err := read(t, text)
		if err != nil {
			t.Fatal(err)
		}
		if got != ref {
			t.Fatalf("mapped %v: the blocks' records differ from the records decoded one by one in order", mapped)
		}
		if _, err := read(t, strings.Join(bad, "\n")+"\n"); err == nil || !strings.Contains(err.Error(), "data.jsonl:30001: operator \"uid:nope\"") {
			t.Fatalf("mapped %v: want the error of line 30001, got %v", mapped, err)
		}
	}
}

// TestReadMappedShrunk: a data file cut short while it is mapped gives an error naming it,
// not a crash (the pages past the new end fault; whileMapped turns that into the error).
func TestReadMappedShrunk(t *testing.T) {
	src := fixture(t, "keyed-hashmap")
	lines := dumpKeyed(t, src)
	var b strings.Builder
	for i := 0; b.Len() < 8<<20; i++ {
		b.WriteString(lines[i%len(lines)] + "\n")
	}
	sp := open(t, src)
	s := &session{src: sp, m: sp.Metadata}
	ops, labels, err := s.loadOps()
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "data.jsonl")
	if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	testHookMapped = func(name string) {
		if err := os.Truncate(name, 4096); err != nil {
			t.Error(err)
		}
	}
	defer func() { testHookMapped = nil }()
	err = readData(name, f, ops, labels, &loadSpill{dir: t.TempDir(), budget: 1 << 40}, true)
	if err == nil || !strings.Contains(err.Error(), name+": the file changed while it was read") {
		t.Fatalf("want the error naming the shrunk file, got %v", err)
	}
}

// FuzzLoadFastPath: on any line, encoding by the tokens (scanFlat, EncodeRaw) gives what the
// decoding path gives: the same spill record, partition, counts, sums and error, for the
// operators of the types-hashmap fixture (Integer, Long, String and tuple keys; value, list,
// map, reducing and aggregating states; TTL). Seeds: its dump's lines and mutants of them.
func FuzzLoadFastPath(f *testing.F) {
	dir := filepath.Join("..", "testdata", "savepoints", "types-hashmap")
	if _, err := os.Stat(filepath.Join(dir, "_metadata")); err != nil {
		f.Skip("fixture types-hashmap not present")
	}
	sp := open(f, dir)
	s := &session{src: sp, m: sp.Metadata}
	ops, labels, err := s.loadOps()
	if err != nil {
		f.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(7, 8))
	lines := dumpKeyed(f, dir)
	for i, l := range lines {
		f.Add([]byte(l), []byte(l))
		if i%20 == 0 {
			for _, m := range mutants(l, rnd) {
				f.Add([]byte(l), []byte(m))
			}
		}
	}
	// prev is read first: a line that has the shape of prev is read by prev's template.
	f.Fuzz(func(t *testing.T, prev, line []byte) {
		fw := newLoadWorker("data.jsonl", ops, labels, true)
		sw := newLoadWorker("data.jsonl", ops, labels, true)
		fb, sb := &loadBatch{}, &loadBatch{}
		if ferr, serr := fw.record(fb, prev, 1), sw.decoded(sb, prev, "data.jsonl:1"); (ferr == nil) != (serr == nil) {
			t.Fatalf("line %q: fast %v, decoded %v", prev, ferr, serr)
		}
		fb.reset()
		sb.reset()
		ferr := fw.record(fb, line, 2)
		serr := sw.decoded(sb, line, "data.jsonl:2")
		if got, want := workerOutput(fw, fb, ferr), workerOutput(sw, sb, serr); got != want {
			t.Fatalf("line %q after %q:\nwith the fast path:\n%s\ndecoded:\n%s", line, prev, got, want)
		}
	})
}

// TestMappedReleaser: pages given back leave the process's resident set (as /proc/self/smaps
// counts the mapping), only whole pages before the offset go, and a page given back reads the
// file's bytes again when touched.
func TestMappedReleaser(t *testing.T) {
	page := os.Getpagesize()
	want := make([]byte, 64*page)
	for i := range want {
		want[i] = byte(i * 7)
	}
	name := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(name, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := mapData(f)
	if m == nil {
		t.Fatal("the file was not mapped")
	}
	defer syscall.Munmap(m)
	touch := func() {
		if !bytes.Equal(m, want) {
			t.Fatal("the mapping does not read the file's bytes")
		}
	}
	touch()
	if got := mappingRSS(t, m); got != 64*page {
		t.Fatalf("resident after reading: %d bytes, want %d", got, 64*page)
	}
	r := newMappedReleaser(m)
	for _, c := range []struct{ end, done int }{
		{page - 1, 0}, // no whole page yet
		{40*page + 100, 40 * page},
		{10 * page, 40 * page}, // never backwards
		{64 * page, 64 * page},
	} {
		r.release(c.end)
		if r.done != c.done {
			t.Fatalf("release(%d): given back up to %d, want %d", c.end, r.done, c.done)
		}
		if got := mappingRSS(t, m); got != 64*page-c.done {
			t.Fatalf("release(%d): %d bytes resident, want %d", c.end, got, 64*page-c.done)
		}
	}
	touch()
}

// mappingRSS is the Rss /proc/self/smaps gives the mapping that starts at m.
func mappingRSS(t *testing.T, m []byte) int {
	t.Helper()
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(&m[0])))
	in := false
	for _, line := range strings.Split(string(smaps), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], "-") {
			in = strings.HasPrefix(f[0], start)
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			var kb int
			if _, err := fmt.Sscanf(line, "Rss: %d kB", &kb); err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no mapping at %s in /proc/self/smaps", start)
	return 0
}

// readText reads text as the data file name (in a new directory) with readData for the
// operators of the savepoint src: by its mapping (mapped), or else by Read (a stream). It returns
// what went into the operators' partitions (loadedParts) and readData's error.
func readText(t *testing.T, src, name, text string, mapped bool) (string, error) {
	t.Helper()
	sp := open(t, src)
	s := &session{src: sp, m: sp.Metadata}
	ops, labels, err := s.loadOps()
	if err != nil {
		t.Fatal(err)
	}
	name = filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if !mapped {
		r = io.MultiReader(f) // not an *os.File: read, not mapped
	}
	err = readData(name, r, ops, labels, &loadSpill{dir: t.TempDir(), budget: 1 << 40}, true)
	return loadedParts(sp.Metadata.Operators, ops), err
}

// decodedOneByOne is the reference for a load's reading: the records each gives (where:
// FILE:LINE or the line number), decoded one by one in order by one worker for the operators
// of src, as loadedParts, and the first error (each's or a record's).
func decodedOneByOne(t *testing.T, src, name string, each func(fn func(rec []byte, where string) error) error) (string, error) {
	t.Helper()
	sp := open(t, src)
	s := &session{src: sp, m: sp.Metadata}
	ops, labels, err := s.loadOps()
	if err != nil {
		t.Fatal(err)
	}
	w := newLoadWorker(name, ops, labels, true)
	lsp := &loadSpill{dir: t.TempDir(), budget: 1 << 40}
	err = each(func(rec []byte, where string) error {
		bt := &loadBatch{}
		bt.reset()
		bt.err = w.decoded(bt, rec, where)
		return bt.apply(lsp)
	})
	w.addUp()
	return loadedParts(sp.Metadata.Operators, ops), err
}

// linesOf gives each non-blank line of data to fn, with its line number as where.
func linesOf(data []string) func(fn func(rec []byte, where string) error) error {
	return func(fn func(rec []byte, where string) error) error {
		for i, l := range data {
			if strings.TrimSpace(l) == "" {
				continue
			}
			if err := fn([]byte(l), fmt.Sprint(i+1)); err != nil {
				return err
			}
		}
		return nil
	}
}
