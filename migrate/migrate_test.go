package migrate

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/keygroup"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/serializer"
	"github.com/statecraft/statecraft/statecore/uid"
)

func fixture(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join("..", "testdata", "savepoints", name)
	if _, err := os.Stat(filepath.Join(dir, "_metadata")); err != nil {
		t.Skipf("fixture %s not present (make fixtures)", name)
	}
	return dir
}

func mustSel(t testing.TB, s string) Selector {
	t.Helper()
	sel, err := ParseSelector(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

func open(t testing.TB, dir string) *savepoint.Savepoint {
	t.Helper()
	sp, err := savepoint.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	return sp
}

// records returns every keyed record and operator-state element of op as a multiset of JSON
// lines without the key group, and checks where each keyed record sits: inside its subtask's
// key-group range, which is the range Flink assigns that subtask, in the key group Flink
// computes from the key's Java hashCode (for the key types the fixtures use).
func records(t *testing.T, sp *savepoint.Savepoint, op *metadata.OperatorState) map[string]int {
	t.Helper()
	out := map[string]int{}
	if !canonicalKeyed(op) {
		t.Fatalf("operator %s is not canonical", Label(op))
	}
	subs, closeAll, err := keyed.OpenSubtasks(sp, op)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	for _, st := range subs {
		want, err := keygroup.RangeForOperator(op.MaxParallelism, op.Parallelism, st.Index)
		if err != nil {
			t.Fatal(err)
		}
		if st.Handle.Range.Start != want.Start || st.Handle.Range.End() != want.End {
			t.Errorf("%s subtask %d: key groups [%d, %d], Flink assigns %s", Label(op), st.Index, st.Handle.Range.Start, st.Handle.Range.End(), want)
		}
		err = st.Records(nil, func(r keyed.Record) error {
			if !want.Contains(int32(r.KeyGroup)) {
				t.Errorf("%s subtask %d: record in key group %d outside %s", Label(op), st.Index, r.KeyGroup, want)
			}
			if k, ok := hashable(r.Key); ok {
				kg, err := keygroup.ForKey(k, op.MaxParallelism)
				if err != nil {
					t.Fatal(err)
				}
				if int(kg) != r.KeyGroup {
					t.Errorf("%s: key %v is in key group %d, Flink puts it in %d (max parallelism %d)", Label(op), r.Key, r.KeyGroup, kg, op.MaxParallelism)
				}
			} else {
				t.Errorf("%s: key %#v: no independent hash in the test", Label(op), r.Key)
			}
			r.KeyGroup = 0
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			out[string(b)]++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	d, err := DigestOf(sp)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range d[op.ID].OpState {
		b, _ := json.Marshal(s)
		out["opstate "+name+" "+string(b)]++
	}
	return out
}

// hashable turns a decoded fixture key (Integer, Long, String, Tuple2<Integer, String>) into the
// value keygroup.HashCode takes, independently of the code under test.
func hashable(k any) (any, bool) {
	switch v := k.(type) {
	case int32, int64, string:
		return v, true
	case serializer.Fields:
		t := keygroup.Tuple{}
		for _, f := range v {
			x, ok := hashable(f.Value)
			if !ok {
				return nil, false
			}
			t = append(t, x)
		}
		return t, true
	}
	return nil, false
}

func sameMultiset(t *testing.T, what string, want, got map[string]int) {
	t.Helper()
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %s: %d in the source, %d in the output", what, k, n, got[k])
		}
	}
	for k, n := range got {
		if want[k] == 0 {
			t.Errorf("%s: %s: %d in the output, not in the source", what, k, n)
		}
	}
	if len(want) == 0 {
		t.Errorf("%s: nothing compared", what)
	}
}

// run migrates src into a new directory and returns it with the report. Every run is preceded
// by a dry run of the same steps, whose result rows must be those of the real output as inspect
// reads them (sizes aside: a dry run writes nothing to measure).
func run(t *testing.T, src string, opt Options, steps ...Step) (string, *Report) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "out")
	var dry *Report
	if !opt.DryRun {
		dryOpt := opt
		dryOpt.DryRun = true
		var err error
		if dry, err = Run(src, dst, steps, dryOpt); err != nil {
			t.Fatalf("dry run: %v", err)
		}
	}
	rep, err := Run(src, dst, steps, opt)
	if err != nil {
		t.Fatal(err)
	}
	if dry != nil {
		out := open(t, dst)
		inspected := savepoint.MetadataRows(out.Metadata)
		out.Close()
		if d, r, i := resultTable(dry.Result), resultTable(rep.Result), resultTable(inspected); d != i || r != i {
			t.Fatalf("the dry run does not show what the run writes:\ndry run:\n%sreport:\n%sinspect of the output:\n%s", d, r, i)
		}
		if !reflect.DeepEqual(dry.Steps, rep.Steps) {
			for i := range rep.Steps {
				if !reflect.DeepEqual(dry.Steps[i], rep.Steps[i]) {
					t.Fatalf("step %d: the dry run reports\n%+v\nthe run\n%+v", i, *dry.Steps[i], *rep.Steps[i])
				}
			}
		}
	}
	return dst, rep
}

// resultTable prints the columns of result rows a dry run can know (every one but the sizes).
func resultTable(rows []savepoint.MetadataRow) string {
	var b strings.Builder
	str := func(p *string) string {
		if p == nil {
			return "NULL"
		}
		return *p
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "%d %q %q %s par=%d max=%d subtasks=%d\n", r.CheckpointID, str(r.OperatorName), str(r.OperatorUID),
			r.OperatorUIDHash, r.Parallelism, r.MaxParallelism, r.SubtaskStateCount)
	}
	return b.String()
}

func TestRenameUID(t *testing.T) {
	cases := []struct {
		fixture string
		renames []Rename
	}{
		{"keyed-hashmap", []Rename{{mustSel(t, "uid:int-keyed"), "counter-v2"}}},
		{"keyed-inline", []Rename{{mustSel(t, "uid:int-keyed"), "inline-v2"}}},
		// an operator that never had a UID gets one; and two operators swap their UIDs
		{"types-hashmap", []Rename{{mustSel(t, "hash:5534c038c66cc9b701311c8cdd8de69b"), "nouid-counter"},
			{mustSel(t, "uid:long-keyed"), "string-keyed"}, {mustSel(t, "uid:string-keyed"), "long-keyed"}}},
		{"operator-state", []Rename{{mustSel(t, "uid:buffer-map"), "buffer-v2"}, {mustSel(t, "uid:broadcast-proc"), "rules-v2"}}},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			src := fixture(t, c.fixture)
			dst, rep := run(t, src, Options{}, &RenameUIDs{Renames: c.renames})
			in, out := open(t, src), open(t, dst)

			// The expected _metadata is the source's with the ids and uids changed: same bytes
			// otherwise (the fixtures use relative handles, which are kept).
			want, err := decodeAgain(in)
			if err != nil {
				t.Fatal(err)
			}
			var olds []*metadata.OperatorState
			for _, r := range c.renames {
				op, err := r.From.find(want)
				if err != nil {
					t.Fatal(err)
				}
				olds = append(olds, op)
			}
			for i, op := range olds {
				name := op.Name
				op.ID, op.UID = uid.OperatorID(c.renames[i].To), c.renames[i].To
				if op.Name != name {
					t.Fatal("name changed")
				}
			}
			var wb bytes.Buffer
			if err := metadata.Encode(&wb, want); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dst, "_metadata"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(wb.Bytes(), got) {
				t.Errorf("output _metadata differs from the source's with only ids and uids changed (%d vs %d bytes)", len(got), wb.Len())
			}
			for i, r := range c.renames {
				op, err := Selector{UID: r.To, ID: uid.OperatorID(r.To)}.find(out.Metadata)
				if err != nil {
					t.Fatal(err)
				}
				if op.UID != r.To || op.Name != olds[i].Name {
					t.Errorf("renamed operator: uid %q name %q, want uid %q name %q", op.UID, op.Name, r.To, olds[i].Name)
				}
				if c.fixture != "native-rocksdb" {
					srcOp, _ := r.From.find(in.Metadata)
					sameMultiset(t, r.From.String(), records(t, in, srcOp), records(t, out, op))
				}
			}
			// Every state file is linked, none written.
			if rep.Written != 0 || rep.Copied != 0 {
				t.Errorf("report: %d written, %d copied; want only links", rep.Written, rep.Copied)
			}
			files, _ := filepath.Glob(filepath.Join(src, "*"))
			for _, f := range files {
				if filepath.Base(f) == "_metadata" {
					continue
				}
				a, errA := os.Stat(f)
				b, errB := os.Stat(filepath.Join(dst, filepath.Base(f)))
				if errA != nil || errB != nil {
					t.Fatalf("state file %s not in the output: %v %v", filepath.Base(f), errA, errB)
				}
				if a.Sys().(*syscall.Stat_t).Ino != b.Sys().(*syscall.Stat_t).Ino {
					t.Errorf("%s: not hard-linked", filepath.Base(f))
				}
			}
			if len(rep.Verify) == 0 {
				t.Error("no verification rows in the report")
			}
		})
	}
}

func TestCopyMode(t *testing.T) {
	src := fixture(t, "keyed-hashmap")
	dst, rep := run(t, src, Options{Link: LinkCopy}, &RenameUIDs{Renames: []Rename{{mustSel(t, "uid:int-keyed"), "x"}}})
	if rep.Copied != 2 || rep.Linked != 0 {
		t.Fatalf("copied %d linked %d, want 2 and 0", rep.Copied, rep.Linked)
	}
	files, _ := filepath.Glob(filepath.Join(dst, "*"))
	for _, f := range files {
		fi, _ := os.Stat(f)
		if fi.Sys().(*syscall.Stat_t).Nlink != 1 {
			t.Errorf("%s has %d links, want a copy", f, fi.Sys().(*syscall.Stat_t).Nlink)
		}
	}
}

func TestRenameRefused(t *testing.T) {
	src := fixture(t, "types-hashmap")
	cases := []struct {
		name    string
		renames []Rename
		want    string
	}{
		{"target exists", []Rename{{mustSel(t, "uid:long-keyed"), "string-keyed"}}, "already has an operator"},
		{"two to one", []Rename{{mustSel(t, "uid:long-keyed"), "x"}, {mustSel(t, "uid:string-keyed"), "x"}}, "two operators would get"},
		{"twice", []Rename{{mustSel(t, "uid:long-keyed"), "x"}, {mustSel(t, "uid:long-keyed"), "y"}}, "renamed twice"},
		{"unknown", []Rename{{mustSel(t, "uid:nope"), "x"}}, "not in the savepoint"},
		{"unknown hash", []Rename{{mustSel(t, "hash:00000000000000000000000000000000"), "x"}}, "not in the savepoint"},
		{"empty", []Rename{{mustSel(t, "uid:long-keyed"), ""}}, "empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			dst := filepath.Join(parent, "out")
			_, err := Run(src, dst, []Step{&RenameUIDs{Renames: c.renames}}, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 0 {
				t.Errorf("a refused run left %v", ents)
			}
		})
	}
}

func TestSelectorSyntax(t *testing.T) {
	for _, s := range []string{"int-keyed", "uid:", "hash:xyz", "hash:5534c038", "name:x"} {
		if _, err := ParseSelector(s); err == nil {
			t.Errorf("ParseSelector(%q) accepted", s)
		}
	}
	sel, err := ParseSelector("hash:5534C038C66CC9B701311C8CDD8DE69B")
	if err != nil || sel.ID.String() != "5534c038c66cc9b701311c8cdd8de69b" {
		t.Errorf("upper-case hash: %v %v", sel, err)
	}
}

type rescaleCase struct {
	fixture  string
	ops      []string
	steps    [][2]int32 // {maxParallelism, parallelism (0 = keep)}
	finalPar map[string]int32
}

var rescaleCases = []rescaleCase{
	{"keyed-hashmap", nil, [][2]int32{{256, 3}}, nil},
	{"keyed-maxpar-256", nil, [][2]int32{{128, 0}}, nil},
	{"keyed-par3", nil, [][2]int32{{64, 2}}, nil},
	{"keyed-hashmap-compressed", nil, [][2]int32{{200, 0}}, nil},
	{"keyed-rocksdb", nil, [][2]int32{{4096, 4}}, nil},
	{"keyed-inline", nil, [][2]int32{{129, 1}}, nil},
	{"types-rocksdb", nil, [][2]int32{{32768, 0}}, nil},
	{"types-hashmap", []string{"uid:tuple-keyed", "hash:5534c038c66cc9b701311c8cdd8de69b"}, [][2]int32{{300, 5}}, nil},
	{"window-hashmap", nil, [][2]int32{{1000, 0}, {4096, 3}}, nil},
	{"operator-state", nil, [][2]int32{{512, 0}}, nil},
}

func TestRescale(t *testing.T) {
	for _, c := range rescaleCases {
		for _, budget := range []int64{0, 200} { // 200 bytes forces spill files and many chunks
			name := c.fixture
			if budget > 0 {
				name += "/spill"
			}
			t.Run(name, func(t *testing.T) {
				src := fixture(t, c.fixture)
				var steps []Step
				for _, s := range c.steps {
					r := &Rescale{MaxParallelism: s[0], Parallelism: s[1]}
					for _, o := range c.ops {
						r.Operators = append(r.Operators, mustSel(t, o))
					}
					steps = append(steps, r)
				}
				dst, _ := run(t, src, Options{SpillBudget: budget}, steps...)
				in, out := open(t, src), open(t, dst)
				last := c.steps[len(c.steps)-1]
				if _, err := os.Stat(filepath.Join(dst, spillDir)); err == nil {
					t.Error("spill directory left in the output")
				}
				for _, op := range in.Metadata.Operators {
					got, err := Selector{ID: op.ID}.find(out.Metadata)
					if err != nil {
						t.Fatal(err)
					}
					selected := len(c.ops) == 0
					for _, o := range c.ops {
						selected = selected || mustSel(t, o).ID == op.ID
					}
					if !hasKeyed(op) {
						if len(c.ops) == 0 && op.SubtaskStateCount() == 0 && got.MaxParallelism != last[0] {
							t.Errorf("%s: stateless operator keeps max parallelism %d", Label(op), got.MaxParallelism)
						}
						if op.SubtaskStateCount() > 0 {
							sameMultiset(t, Label(op), records(t, in, op), records(t, out, got))
						}
						continue
					}
					wantMax, wantPar := op.MaxParallelism, op.Parallelism
					if selected {
						for _, s := range c.steps {
							wantMax = s[0]
							if s[1] > 0 {
								wantPar = s[1]
							}
							wantPar = min(wantPar, wantMax)
						}
					}
					if got.MaxParallelism != wantMax || got.Parallelism != wantPar || got.SubtaskStateCount() != int(wantPar) {
						t.Errorf("%s: max parallelism %d parallelism %d subtask states %d, want %d %d %d", Label(op),
							got.MaxParallelism, got.Parallelism, got.SubtaskStateCount(), wantMax, wantPar, wantPar)
					}
					sameMultiset(t, Label(op), records(t, in, op), records(t, out, got))
				}
			})
		}
	}
}

func TestRescaleRefused(t *testing.T) {
	cases := []struct {
		fixture string
		step    *Rescale
		want    string
	}{
		{"operator-state", &Rescale{MaxParallelism: 256, Parallelism: 3}, "operator state"},
		{"keyed-hashmap", &Rescale{MaxParallelism: 2, Parallelism: 3}, "parallelism 3"},
		{"keyed-hashmap", &Rescale{MaxParallelism: 40000}, "max parallelism 40000"},
		{"keyed-hashmap", &Rescale{MaxParallelism: 256, Operators: []Selector{{UID: "source", ID: uid.OperatorID("source")}}}, "no keyed state"},
	}
	for _, c := range cases {
		t.Run(c.fixture+"/"+c.want, func(t *testing.T) {
			parent := t.TempDir()
			_, err := Run(fixture(t, c.fixture), filepath.Join(parent, "out"), []Step{c.step}, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 0 {
				t.Errorf("a refused run left %v", ents)
			}
		})
	}
}

func TestKeyTypesRefusedByName(t *testing.T) {
	for _, s := range []*serializer.Snapshot{
		{Class: "org.apache.flink.api.java.typeutils.runtime.PojoSerializerSnapshot", TypeClass: "com.example.Account"},
		{Class: snapTuple, Nested: []*serializer.Snapshot{{Class: "org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot"}}},
	} {
		_, err := newKeyHasher(s)
		if err == nil || !strings.Contains(err.Error(), "no Java hashCode") {
			t.Errorf("%s: error %v, want a refusal", s.Class, err)
		}
	}
	if _, err := newKeyHasher(&serializer.Snapshot{Class: "org.apache.flink.api.java.typeutils.runtime.PojoSerializerSnapshot", TypeClass: "com.example.Account"}); err == nil || !strings.Contains(err.Error(), "com.example.Account") {
		t.Errorf("the refusal does not name the key type: %v", err)
	}
}

// TestKeyHasherTypes checks keyHasher on bytes laid out as Flink's serializers write them against
// keygroup.HashCode of the same value.
func TestKeyHasherTypes(t *testing.T) {
	simple := func(short string) *serializer.Snapshot {
		return &serializer.Snapshot{Class: "org.apache.flink.api.common.typeutils.base." + short + "Serializer$" + short + "SerializerSnapshot"}
	}
	cases := []struct {
		name  string
		snap  *serializer.Snapshot
		bytes []byte
		want  any
	}{
		{"int", simple("Int"), []byte{0xff, 0xff, 0xff, 0xfe}, int32(-2)},
		{"long", simple("Long"), []byte{0, 0, 0, 1, 0, 0, 0, 2}, int64(1<<32 + 2)},
		{"short", simple("Short"), []byte{0x80, 0}, int16(-32768)},
		{"byte", simple("Byte"), []byte{7}, int8(7)},
		{"boolean", simple("Boolean"), []byte{1}, true},
		{"char", simple("Char"), []byte{0, 'A'}, keygroup.Char('A')},
		{"float", simple("Float"), []byte{0x3f, 0x80, 0, 0}, float32(1)},
		{"double", simple("Double"), []byte{0x3f, 0xf0, 0, 0, 0, 0, 0, 0}, float64(1)},
		{"string", simple("String"), []byte{4, 'a', 'b', 'c'}, "abc"},
		{"tuple", &serializer.Snapshot{Class: snapTuple, Nested: []*serializer.Snapshot{simple("Int"), simple("String")}},
			[]byte{0, 0, 0, 5, 2, 'x'}, keygroup.Tuple{int32(5), "x"}},
		// Row with kinds: mask bits kind&1, kind&2, then field nulls; field 1 is null
		{"row", &serializer.Snapshot{Class: snapRow, RowKind: true, Nested: []*serializer.Snapshot{simple("Long"), simple("Int")}},
			[]byte{0x80 | 0x10, 0, 0, 0, 0, 0, 0, 0, 9}, keygroup.Row{Kind: keygroup.UpdateBefore, Fields: []any{int64(9), nil}}},
		{"rowdata", &serializer.Snapshot{Class: snapRowData}, []byte{0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0}, keygroup.BinaryRow(make([]byte, 8))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := newKeyHasher(c.snap)
			if err != nil {
				t.Fatal(err)
			}
			in := serializer.NewInput(c.bytes)
			got, err := h.hash(in)
			if err != nil {
				t.Fatal(err)
			}
			want, err := keygroup.HashCode(c.want)
			if err != nil {
				t.Fatal(err)
			}
			if got != want || in.Remaining() != 0 {
				t.Errorf("hash %d (%d bytes left), want %d", got, in.Remaining(), want)
			}
		})
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	src := fixture(t, "keyed-hashmap")
	parent := t.TempDir()
	dst := filepath.Join(parent, "out")
	rep, err := Run(src, dst, []Step{&RenameUIDs{Renames: []Rename{{mustSel(t, "uid:int-keyed"), "v2"}}},
		&Rescale{MaxParallelism: 256, Parallelism: 4}}, Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Fatalf("dry run wrote %v", ents)
	}
	if len(rep.Steps) != 2 || len(rep.Result) != 2 {
		t.Fatalf("report: %d steps, %d result rows", len(rep.Steps), len(rep.Result))
	}
	r := rep.Steps[1].Operators[0]
	total := 0
	for _, n := range r.EntriesPerSubtask {
		total += n
	}
	if len(r.EntriesPerSubtask) != 4 || total != 90 || r.EntriesBefore["count"] != 12 {
		t.Errorf("dry-run rescale counts: per subtask %v (want 4 adding up to 90), count %d", r.EntriesPerSubtask, r.EntriesBefore["count"])
	}
	row := rep.Result[0]
	if *row.OperatorUID != "v2" || row.MaxParallelism != 256 || row.Parallelism != 4 {
		t.Errorf("dry-run result row %+v", row)
	}
	// The dry run reports what a real run then does.
	_, real := run(t, src, Options{}, &RenameUIDs{Renames: []Rename{{mustSel(t, "uid:int-keyed"), "v2"}}},
		&Rescale{MaxParallelism: 256, Parallelism: 4})
	if a, b := r.EntriesPerSubtask, real.Steps[1].Operators[0].EntriesPerSubtask; !equalInts(a, b) {
		t.Errorf("dry run per-subtask counts %v, real run %v", a, b)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTarget(t *testing.T) {
	src := fixture(t, "keyed-hashmap")
	step := func() []Step { return []Step{&RenameUIDs{Renames: []Rename{{mustSel(t, "uid:int-keyed"), "v2"}}}} }

	parent := t.TempDir()
	full := filepath.Join(parent, "full")
	os.MkdirAll(full, 0o755)
	os.WriteFile(filepath.Join(full, "x"), []byte("x"), 0o644)
	if _, err := Run(src, full, step(), Options{}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("non-empty DST: %v", err)
	}
	if _, err := Run(src, filepath.Join(src, "sub"), step(), Options{}); err == nil || !strings.Contains(err.Error(), "inside the source") {
		t.Errorf("DST inside SRC: %v", err)
	}
	// ... also through a symbolic link to the source directory.
	abs, _ := filepath.Abs(src)
	link := filepath.Join(parent, "link")
	if err := os.Symlink(abs, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(src, filepath.Join(link, "sub"), step(), Options{}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("DST inside SRC through a link: %v", err)
	}
	os.Remove(link)
	// An empty directory is fine, and a leftover of a killed run does not block.
	empty := filepath.Join(parent, "empty")
	os.MkdirAll(empty, 0o755)
	leftover := filepath.Join(parent, "empty"+stageInfix+"123")
	os.MkdirAll(leftover, 0o755)
	var note bytes.Buffer
	if _, err := Run(src, empty, step(), Options{Notes: &note}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(empty, "_metadata")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(note.String(), "left over") {
		t.Errorf("no note about the leftover: %q", note.String())
	}
	// The source is untouched.
	open(t, src)
}

func TestVerifyCatchesCorruption(t *testing.T) {
	src := fixture(t, "keyed-hashmap")
	parent := t.TempDir()
	dst := filepath.Join(parent, "out")
	testHookBeforeVerify = func(stage string) { damageLastValue(t, stage) }
	defer func() { testHookBeforeVerify = nil }()
	_, err := Run(src, dst, []Step{&Rescale{MaxParallelism: 256}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "checksum differs") {
		t.Fatalf("error %v, want a checksum difference", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("a failed verification left %v", ents)
	}
}

// damageLastValue flips the last byte of the last value (before the 0xFFFF end mark) of the
// first state file in stage and returns the file's name ("" when there is none).
func damageLastValue(t *testing.T, stage string) string {
	t.Helper()
	ents, _ := os.ReadDir(stage)
	for _, e := range ents {
		if e.Name() == "_metadata" || e.IsDir() {
			continue
		}
		p := filepath.Join(stage, e.Name())
		b, err := os.ReadFile(p)
		if err != nil || len(b) <= 3 {
			continue
		}
		b[len(b)-3] ^= 0x01
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return e.Name()
	}
	return ""
}

func TestCompareReports(t *testing.T) {
	sp := open(t, fixture(t, "keyed-hashmap"))
	a, err := DigestOf(sp)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := DigestOf(sp)
	if _, diff := Compare(a, b); diff != "" {
		t.Fatalf("equal digests differ: %s", diff)
	}
	id := uid.OperatorID("int-keyed")
	b[id].Keyed["count"].Hash++
	if _, diff := Compare(a, b); !strings.Contains(diff, `"count"`) {
		t.Errorf("changed hash: %q", diff)
	}
	b[id].Keyed["count"].Hash--
	b[id].Keyed["count"].Count--
	if _, diff := Compare(a, b); !strings.Contains(diff, "12 entries expected, 11") {
		t.Errorf("changed count: %q", diff)
	}
	b[id].Keyed["count"].Count++
	delete(b[id].Keyed, "sum")
	if _, diff := Compare(a, b); !strings.Contains(diff, `"sum" is missing`) {
		t.Errorf("missing state: %q", diff)
	}
	delete(b, id)
	if _, diff := Compare(a, b); !strings.Contains(diff, "missing from the output") {
		t.Errorf("missing operator: %q", diff)
	}
}

func TestSplitHeaderRoundTrip(t *testing.T) {
	for _, name := range []string{"keyed-hashmap", "types-rocksdb", "window-hashmap"} {
		sp := open(t, fixture(t, name))
		for _, op := range sp.Metadata.Operators {
			if !hasKeyed(op) {
				continue
			}
			subs, closeAll, err := keyed.OpenSubtasks(sp, op)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range subs {
				p, err := splitHeader(st.Header, st.Name)
				if err != nil {
					t.Fatal(err)
				}
				h, err := p.build(p.metas, st.Name)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(h.Raw, st.Header.Raw) {
					t.Errorf("%s: rebuilt header differs", st.Name)
				}
				var names []string
				for _, m := range st.Header.States {
					names = append(names, m.Name)
				}
				if strings.Join(p.names, ",") != strings.Join(names, ",") {
					t.Errorf("%s: names %v vs %v", st.Name, p.names, names)
				}
				// Dropping the first state gives a header without it.
				h2, err := p.build(p.metas[1:], st.Name)
				if err != nil {
					t.Fatal(err)
				}
				if len(h2.States) != len(names)-1 || h2.States[0].Name != names[1] {
					t.Errorf("%s: header without the first state has %d states", st.Name, len(h2.States))
				}
			}
			closeAll()
		}
	}
}

// decoded returns op's keyed records as JSON lines (key group dropped) per state name.
func decoded(t *testing.T, sp *savepoint.Savepoint, sel Selector) map[string]map[string]int {
	t.Helper()
	op, err := sel.find(sp.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	subs, closeAll, err := keyed.OpenSubtasks(sp, op)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	out := map[string]map[string]int{}
	for _, st := range subs {
		for _, m := range st.Header.States {
			if out[m.Name] == nil {
				out[m.Name] = map[string]int{}
			}
		}
		if err := st.Records(nil, func(r keyed.Record) error {
			r.KeyGroup = 0
			b, _ := json.Marshal(r)
			out[r.State][string(b)]++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// valueType returns the value type of op's keyed state, as inspect shows it ("" if absent).
func valueType(t *testing.T, sp *savepoint.Savepoint, sel Selector, state string) string {
	t.Helper()
	return serializer.JavaType(valueSnapshot(t, sp, sel, state))
}

// valueSnapshot returns the snapshot of the stored values of op's keyed state (the value
// serializer, a list's element or a map's value serializer, TTL unwrapped), nil if absent.
func valueSnapshot(t *testing.T, sp *savepoint.Savepoint, sel Selector, state string) *serializer.Snapshot {
	t.Helper()
	op, _ := sel.find(sp.Metadata)
	subs, closeAll, err := keyed.OpenSubtasks(sp, op)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	for _, sd := range subs[0].Decoder.States {
		if sd.Meta.Name == state {
			vs := sd.Meta.Serializer(keyed.SerValue)
			switch sd.Kind {
			case "list", "map":
				vs = vs.Nested[len(vs.Nested)-1]
			}
			return serializer.UnwrapTTL(vs)
		}
	}
	return nil
}

func TestStateSteps(t *testing.T) {
	src := fixture(t, "keyed-hashmap")
	op := mustSel(t, "uid:int-keyed")
	in := open(t, src)
	before := decoded(t, in, op)
	cases := []struct {
		name  string
		steps []Step
		check func(t *testing.T, out *savepoint.Savepoint)
	}{
		{"rename-state", []Step{&RenameState{Operator: op, From: "seen", To: "seen-v2"}}, func(t *testing.T, out *savepoint.Savepoint) {
			got := decoded(t, out, op)
			if got["seen"] != nil || len(got["seen-v2"]) != len(before["seen"]) {
				t.Fatalf("after rename: seen %d lines, seen-v2 %d, want 0 and %d", len(got["seen"]), len(got["seen-v2"]), len(before["seen"]))
			}
			for l, n := range before["seen"] {
				if got["seen-v2"][strings.Replace(l, `"state":"seen"`, `"state":"seen-v2"`, 1)] != n {
					t.Errorf("renamed state lacks %s", l)
				}
			}
			for name, lines := range before {
				if name != "seen" {
					sameMultiset(t, name, lines, got[name])
				}
			}
		}},
		{"drop-state", []Step{&DropState{Operator: op, State: "names"}, &DropState{Operator: op, State: "_timer_state/processing_user-timers"}}, func(t *testing.T, out *savepoint.Savepoint) {
			got := decoded(t, out, op)
			if got["names"] != nil || got["_timer_state/processing_user-timers"] != nil {
				t.Fatal("dropped states still present")
			}
			if len(got) != len(before)-2 {
				t.Fatalf("%d states left, want %d", len(got), len(before)-2)
			}
			for name, lines := range got {
				sameMultiset(t, name, before[name], lines)
			}
		}},
		{"drop-operator", []Step{&DropOperator{Operator: op}}, func(t *testing.T, out *savepoint.Savepoint) {
			if len(out.Metadata.Operators) != len(in.Metadata.Operators)-1 {
				t.Fatalf("%d operators", len(out.Metadata.Operators))
			}
			if _, err := op.find(out.Metadata); err == nil {
				t.Fatal("dropped operator still present")
			}
			if ents, _ := os.ReadDir(out.Dir); len(ents) != 1 {
				t.Errorf("output holds %d files, want only _metadata (the operator's files are not copied)", len(ents))
			}
		}},
		{"retype widen and narrow", []Step{&Retype{Operator: op, State: "seen", To: "Long"}, &Retype{Operator: op, State: "count", To: "Integer"},
			&Retype{Operator: op, State: "ratio", To: "Float"}}, func(t *testing.T, out *savepoint.Savepoint) {
			got := decoded(t, out, op)
			for name, typ := range map[string]string{"seen": "Long", "count": "Integer", "ratio": "Float", "sum": "Long"} {
				if vt := valueType(t, out, op, name); vt != typ {
					t.Errorf("%s: value type %s, want %s", name, vt, typ)
				}
			}
			// Values read back the same (every one of them fits the new type exactly).
			for name, lines := range before {
				sameMultiset(t, name, lines, got[name])
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst, _ := run(t, src, Options{}, c.steps...)
			c.check(t, open(t, dst))
		})
	}
}

func TestRetypeRefused(t *testing.T) {
	src := fixture(t, "keyed-hashmap")
	op := mustSel(t, "uid:int-keyed")
	cases := []struct {
		step Step
		want string
	}{
		// sum values do not fit a Byte... unless they do; names are Strings like "n3", which do not parse
		{&Retype{Operator: op, State: "names", To: "Integer"}, `does not parse as an Integer`},
		{&Retype{Operator: op, State: "ratio", To: "Integer"}, "not an integer"},
		{&Retype{Operator: op, State: "minmax", To: "Long"}, "aggregating"},
		{&Retype{Operator: op, State: "count", To: "String"}, "want Integer"},
		{&Retype{Operator: op, State: "nope", To: "Long"}, "no keyed state"},
		{&RenameState{Operator: op, From: "seen", To: "count"}, "already exists"},
		{&DropState{Operator: op, State: "nope"}, "no keyed state"},
		{&RenameState{Operator: mustSel(t, "uid:source"), From: "a", To: "b"}, "no keyed state"},
	}
	for _, c := range cases {
		t.Run(c.step.Describe(), func(t *testing.T) {
			parent := t.TempDir()
			_, err := Run(src, filepath.Join(parent, "out"), []Step{c.step}, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 0 {
				t.Errorf("a refused run left %v", ents)
			}
		})
	}
}

func TestRetypeNamesFirstFailingKey(t *testing.T) {
	_, err := Run(fixture(t, "keyed-hashmap"), filepath.Join(t.TempDir(), "out"),
		[]Step{&Retype{Operator: mustSel(t, "uid:int-keyed"), State: "ratio", To: "Long"}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "key ") || !strings.Contains(err.Error(), "ratio") {
		t.Fatalf("error %v: want one naming the state and the key", err)
	}
}

func TestConvertValue(t *testing.T) {
	cases := []struct {
		v        any
		from, to string
		want     []byte
		err      string
	}{
		{int32(-1), "Integer", "Long", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, ""},
		{int64(1 << 31), "Long", "Integer", nil, "does not fit"},
		{int64(-128), "Long", "Byte", []byte{0x80}, ""},
		{int16(300), "Short", "Byte", nil, "does not fit"},
		{serializer.Float(1.5), "Float", "Double", []byte{0x3f, 0xf8, 0, 0, 0, 0, 0, 0}, ""},
		{serializer.Float(2), "Double", "Integer", []byte{0, 0, 0, 2}, ""},
		{serializer.Float(1e300), "Double", "Float", nil, "outside Float"},
		{int64(1<<53 + 1), "Long", "Double", nil, "no exact Double"},
		{"42", "String", "Integer", []byte{0, 0, 0, 42}, ""},
		{"4.5", "String", "Double", []byte{0x40, 0x12, 0, 0, 0, 0, 0, 0}, ""},
		{"x", "String", "Long", nil, "does not parse"},
		{true, "Boolean", "Integer", nil, "does not convert"},
	}
	for _, c := range cases {
		got, err := convertValue(c.v, c.from, c.to)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%v %s->%s: error %v, want %q", c.v, c.from, c.to, err, c.err)
		case c.err == "" && (err != nil || !bytes.Equal(got, c.want)):
			t.Errorf("%v %s->%s: % x %v, want % x", c.v, c.from, c.to, got, err, c.want)
		}
	}
}

// loadScript parses an example script of testdata/migrations.
func loadScript(t *testing.T, name string) []Step {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "migrations", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	steps, err := ParseScript(f, name)
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

func TestScript(t *testing.T) {
	src := fixture(t, "keyed-hashmap")
	steps := loadScript(t, "keyed-hashmap.yaml")
	if len(steps) != 4 {
		t.Fatalf("%d steps", len(steps))
	}
	dst, rep := run(t, src, Options{}, steps...)
	out := open(t, dst)
	op, err := mustSel(t, "uid:counter-v2").find(out.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	if op.MaxParallelism != 256 || op.Parallelism != 3 || op.Name != "int-keyed" {
		t.Errorf("operator %+v", op)
	}
	if vt := valueType(t, out, mustSel(t, "uid:counter-v2"), "seen"); vt != "Long" {
		t.Errorf("seen: %s", vt)
	}
	in := open(t, src)
	srcOp, _ := mustSel(t, "uid:int-keyed").find(in.Metadata)
	sameMultiset(t, "script", records(t, in, srcOp), records(t, out, op))
	if len(rep.Steps) != 4 || rep.Written != 3 {
		t.Errorf("report: %d steps, %d files written (want 4 and 3: intermediate files removed)", len(rep.Steps), rep.Written)
	}
}

func TestScriptErrors(t *testing.T) {
	cases := []struct{ script, want string }{
		{"steps: []", "non-empty steps"},
		{"step: []", "unknown key"},
		{"steps:\n  - explode: {}\n", "unknown step"},
		{"steps:\n  - rescale: {parallelism: 2}\n", `"max-parallelism" is required`},
		{"steps:\n  - rescale: {max-parallelism: 2, colour: red}\n", `line 2: rescale: unknown field "colour"`},
		{"steps:\n  - drop-state: {operator: counter, state: x}\n", "want uid:NAME or hash:HEX"},
		{"steps:\n  - rename-uid: {from: \"uid:a\"}\n", "empty"},
		{"steps:\n  - rename-uid: {from: \"uid:a\", to: b}\n    drop-operator: {operator: \"uid:a\"}\n", "one key"},
		{"steps: [", "yaml"},
		{"", "s.yaml: the script is empty: want a mapping with a steps list"},
		{"# only a comment\n", "s.yaml: the script is empty"},
	}
	for _, c := range cases {
		_, err := ParseScript(strings.NewReader(c.script), "s.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.script, err, c.want)
		}
	}
	// A script whose later step fails validation writes nothing, even though its first step is fine.
	parent := t.TempDir()
	steps, err := ParseScript(strings.NewReader("steps:\n  - rename-uid: {from: \"uid:int-keyed\", to: b}\n  - drop-state: {operator: \"uid:int-keyed\", state: x}\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(fixture(t, "keyed-hashmap"), filepath.Join(parent, "out"), steps, Options{})
	if err == nil || !strings.Contains(err.Error(), "not in the savepoint") {
		t.Fatalf("error %v", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("left %v", ents)
	}
}

// TestRetypeMapKey converts a map entry's String user key "42" to Integer. The fixtures' map keys
// are words, so the entry is a real "seen" entry whose user key bytes are replaced by those of
// "42" (the rest of the key, and the value, are Flink's).
func TestRetypeMapKey(t *testing.T) {
	sp := open(t, fixture(t, "keyed-hashmap"))
	op, _ := mustSel(t, "uid:int-keyed").find(sp.Metadata)
	subs, closeAll, err := keyed.OpenSubtasks(sp, op)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	st := subs[0]
	var entry *keyed.Entry
	var uk any
	st.Entries(func(e *keyed.Entry) error {
		if entry == nil && st.Header.States[e.StateID].Name == "seen" {
			r, err := st.Decoder.Decode(e)
			if err != nil {
				t.Fatal(err)
			}
			entry = &keyed.Entry{KeyGroup: e.KeyGroup, StateID: e.StateID, Key: bytes.Clone(e.Key), Value: bytes.Clone(e.Value)}
			uk = r.UserKey
		}
		return nil
	})
	if entry == nil {
		t.Fatal("no seen entry")
	}
	old, err := encodeSimple(uk, "String")
	if err != nil || !bytes.HasSuffix(entry.Key, old) {
		t.Fatalf("the String encoding of %v (% x) does not end the key % x: %v", uk, old, entry.Key, err)
	}
	n42, _ := encodeSimple("42", "String")
	entry.Key = append(entry.Key[:len(entry.Key)-len(old)], n42...)
	rs := &retypeState{id: entry.StateID, kind: "map", keyFrom: "String", keyTo: "Integer"}
	key, err := rs.convertKey(entry, st.Decoder)
	if err != nil {
		t.Fatal(err)
	}
	want := append(bytes.Clone(entry.Key[:len(entry.Key)-len(n42)]), 0, 0, 0, 42)
	if !bytes.Equal(key, want) {
		t.Errorf("key % x, want % x", key, want)
	}
	// The words of the fixture do not parse: the step names the key.
	_, err = Run(fixture(t, "keyed-hashmap"), filepath.Join(t.TempDir(), "out"),
		[]Step{&Retype{Operator: mustSel(t, "uid:int-keyed"), State: "seen", KeyTo: "Integer"}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "map key") || !strings.Contains(err.Error(), "does not parse") {
		t.Errorf("error %v", err)
	}
	// Map keys of a value state: refused.
	_, err = Run(fixture(t, "keyed-hashmap"), filepath.Join(t.TempDir(), "out"),
		[]Step{&Retype{Operator: mustSel(t, "uid:int-keyed"), State: "count", KeyTo: "Integer"}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "only map states") {
		t.Errorf("error %v", err)
	}
}

// TestAbsoluteHandlesBecomeRelative: a savepoint whose _metadata names its state files by
// absolute file: URIs (tag 2, as older Flink versions wrote) gives an output whose handles are
// all relative (tag 6) and whose files are all inside it.
func TestAbsoluteHandlesBecomeRelative(t *testing.T) {
	src := t.TempDir()
	fx := fixture(t, "keyed-hashmap")
	ents, _ := os.ReadDir(fx)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(fx, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(src, e.Name()), b, 0o644)
	}
	sp := open(t, src)
	m, _ := decodeAgain(sp)
	n := 0
	walkStreams(m, func(_ string, h *metadata.StreamHandle) error {
		if r, ok := (*h).(*metadata.RelativeFileHandle); ok {
			*h = &metadata.FileHandle{Path: "file:" + filepath.Join(src, r.Path), Size: r.Size}
			n++
		}
		return nil
	})
	if n == 0 {
		t.Fatal("no relative handles in the fixture")
	}
	var b bytes.Buffer
	metadata.Encode(&b, m)
	os.WriteFile(filepath.Join(src, "_metadata"), b.Bytes(), 0o644)

	dst, _ := run(t, src, Options{}, &RenameUIDs{Renames: []Rename{{mustSel(t, "uid:int-keyed"), "v2"}}})
	out := open(t, dst)
	rel := 0
	walkStreams(out.Metadata, func(label string, h *metadata.StreamHandle) error {
		switch x := (*h).(type) {
		case *metadata.RelativeFileHandle:
			rel++
			if _, err := os.Stat(filepath.Join(dst, x.Path)); err != nil {
				t.Errorf("%s: %v", label, err)
			}
		case *metadata.FileHandle:
			t.Errorf("%s: absolute handle %s left in the output", label, x.Path)
		}
		return nil
	})
	if rel != n {
		t.Errorf("%d relative handles, want %d", rel, n)
	}
	// Moving the source away must not break the output.
	os.RemoveAll(src)
	if _, err := DigestOf(out); err != nil {
		t.Errorf("output depends on the source: %v", err)
	}
}

func TestEntryHashIsXXH3(t *testing.T) {
	// The checksum is a documented function, not ad hoc: XXH3-64, seeded with the key's length
	// past its prefix, of the key past its prefix, the value's length and the value. The empty
	// input's XXH3-64 is the published 2D06800538D394C2, so the library is that function.
	if got := xxh3.Hash(nil); got != 0x2D06800538D394C2 {
		t.Fatalf("XXH3-64 of nothing = %x", got)
	}
	key, val := []byte{7, 1, 2, 3}, []byte("value")
	want := xxh3.HashSeed([]byte{1, 2, 3, 0, 0, 0, 5, 'v', 'a', 'l', 'u', 'e'}, 3)
	if got := entryHash(key, 1, val); got != want {
		t.Errorf("entryHash %x, want %x", got, want)
	}
	// The same entry as it lies in a block (one buffer: prefix, key, value length, value) is
	// hashed in place, to the same sum; so are long entries, empty values and bare prefixes.
	cases := []struct {
		prefix     int
		key, value []byte
	}{
		{1, key, val},
		{2, []byte{0, 9, 4, 5}, []byte{}},
		{1, []byte{3}, []byte("x")},
		{2, []byte{1, 2}, bytes.Repeat([]byte("v"), 300)},
		{1, append([]byte{5}, bytes.Repeat([]byte("k"), 90)...), bytes.Repeat([]byte("w"), 70)},
	}
	for i, c := range cases {
		block := binary.BigEndian.AppendUint32(nil, uint32(len(c.key)))
		block = append(block, c.key...)
		block = binary.BigEndian.AppendUint32(block, uint32(len(c.value)))
		block = append(block, c.value...)
		k := block[4 : 4+len(c.key)]
		v := block[8+len(c.key):]
		if got, want := entryHash(k, c.prefix, v), entryHash(bytes.Clone(c.key), c.prefix, bytes.Clone(c.value)); got != want {
			t.Errorf("case %d: in place %x, copied %x", i, got, want)
		}
	}
	// The prefix is not hashed; how bytes split between key and value is.
	if entryHash([]byte{9, 1, 2, 3}, 1, val) != entryHash(key, 1, val) {
		t.Error("the key-group prefix changes the hash")
	}
	if entryHash([]byte{7, 1, 2}, 1, []byte{3, 'v', 'a', 'l', 'u', 'e'}) == entryHash(key, 1, val) {
		t.Error("moving a byte from the key to the value keeps the hash")
	}
}

// TestCorruptSourceNeverPanics flips every 7th byte (and cuts the file at several points) of a
// keyed-state file of a copy of a fixture, then rescales and renames it. A run may fail (with an
// error, and without creating DST) or succeed (a flipped value byte is copied as it is, and
// verification compares with the source as read); it must not panic.
func TestCorruptSourceNeverPanics(t *testing.T) {
	fx := fixture(t, "keyed-hashmap-compressed")
	ents, _ := os.ReadDir(fx)
	var stateFile string
	for _, e := range ents {
		if e.Name() != "_metadata" {
			stateFile = e.Name()
		}
	}
	orig, _ := os.ReadFile(filepath.Join(fx, stateFile))
	mutate := func(t *testing.T, b []byte) {
		src := t.TempDir()
		for _, e := range ents {
			data, _ := os.ReadFile(filepath.Join(fx, e.Name()))
			if e.Name() == stateFile {
				data = b
			}
			os.WriteFile(filepath.Join(src, e.Name()), data, 0o644)
		}
		for _, steps := range [][]Step{{&Rescale{MaxParallelism: 256, Parallelism: 3}}, {&Retype{Operator: mustSel(t, "uid:int-keyed"), State: "count", To: "Integer"}}} {
			parent := t.TempDir()
			dst := filepath.Join(parent, "out")
			_, err := Run(src, dst, steps, Options{})
			if err != nil {
				if ents, _ := os.ReadDir(parent); len(ents) != 0 {
					t.Errorf("failed run left %v", ents)
				}
			}
		}
	}
	for i := 0; i < len(orig); i += 7 {
		b := bytes.Clone(orig)
		b[i] ^= 0x5a
		mutate(t, b)
	}
	for _, n := range []int{len(orig) - 1, len(orig) / 2, 100} {
		mutate(t, orig[:n])
	}
}

// TestRetypeTypes: a map's Long user keys and a list's Long elements narrowed to Integer, and an
// Integer value widened to Long on the operator without UID; every value reads back the same and
// the header names the new types.
func TestRetypeTypes(t *testing.T) {
	for _, name := range []string{"types-hashmap", "types-rocksdb"} {
		t.Run(name, func(t *testing.T) {
			src := fixture(t, name)
			lk, nouid := mustSel(t, "uid:long-keyed"), mustSel(t, "hash:5534c038c66cc9b701311c8cdd8de69b")
			dst, _ := run(t, src, Options{},
				&Retype{Operator: lk, State: "byName", KeyTo: "Integer"},
				&Retype{Operator: lk, State: "history", To: "Integer"},
				&Retype{Operator: nouid, State: "hits", To: "Long"})
			in, out := open(t, src), open(t, dst)
			for _, sel := range []Selector{lk, nouid} {
				a, b := decoded(t, in, sel), decoded(t, out, sel)
				for st, lines := range a {
					if len(lines) == 0 { // a timer queue the job never used
						if len(b[st]) != 0 {
							t.Errorf("%s: empty in the source, %d entries in the output", st, len(b[st]))
						}
						continue
					}
					sameMultiset(t, st, lines, b[st])
				}
			}
			if vt := valueType(t, out, lk, "history"); vt != "Integer" {
				t.Errorf("history: %s", vt)
			}
			if vt := valueType(t, out, nouid, "hits"); vt != "Long" {
				t.Errorf("hits: %s", vt)
			}
			op, _ := lk.find(out.Metadata)
			subs, closeAll, err := keyed.OpenSubtasks(out, op)
			if err != nil {
				t.Fatal(err)
			}
			defer closeAll()
			for _, sd := range subs[0].Decoder.States {
				if sd.Meta.Name == "byName" {
					if k := serializer.JavaType(sd.Meta.Serializer(keyed.SerValue).Nested[0]); k != "Integer" {
						t.Errorf("byName user key type %s", k)
					}
				}
			}
		})
	}
}

// TestRetypeTTLCollections: values of a TTL map state narrowed from Long to Integer, with a
// rescale: every last-access timestamp stays with its value.
func TestRetypeTTLCollections(t *testing.T) {
	src := fixture(t, "keyed-ttl-collections")
	op := mustSel(t, "uid:ttl-collections")
	dst, _ := run(t, src, Options{}, &Retype{Operator: op, State: "attrs", To: "Integer"}, &Rescale{MaxParallelism: 300, Parallelism: 3})
	in, out := open(t, src), open(t, dst)
	a, b := decoded(t, in, op), decoded(t, out, op)
	for st, lines := range a {
		if len(lines) == 0 {
			continue
		}
		sameMultiset(t, st, lines, b[st]) // lines include ttlTimestamp
	}
	if !strings.Contains(fmt.Sprint(a["attrs"]), "ttlTimestamp") {
		t.Error("the fixture's attrs entries carry no TTL timestamps; the test proves nothing")
	}
	if vt := valueType(t, out, op, "attrs"); vt != "Integer" {
		t.Errorf("attrs: %s", vt)
	}
}

// TestRetypeTupleField: field f0 of Tuple2<Integer, String> values widened to Long.
func TestRetypeTupleField(t *testing.T) {
	src := fixture(t, "types-hashmap")
	sk := mustSel(t, "uid:string-keyed")
	dst, _ := run(t, src, Options{}, &Retype{Operator: sk, State: "pair", Field: "f0", To: "Long"})
	in, out := open(t, src), open(t, dst)
	sameMultiset(t, "pair", decoded(t, in, sk)["pair"], decoded(t, out, sk)["pair"])
	if vt := valueType(t, out, sk, "pair"); vt != "Tuple2<Long, String>" {
		t.Errorf("pair: %s", vt)
	}
	for _, c := range []struct {
		step *Retype
		want string
	}{
		{&Retype{Operator: sk, State: "pair", Field: "f1", To: "Long"}, "does not parse"},
		{&Retype{Operator: sk, State: "pair", Field: "f2", To: "Long"}, "want f0..f1"},
		{&Retype{Operator: sk, State: "session", Field: "f0", To: "Long"}, "not a tuple"},
		{&Retype{Operator: sk, State: "pair", Field: "f0"}, "give the new value type"},
	} {
		_, err := Run(src, filepath.Join(t.TempDir(), "out"), []Step{c.step}, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.step.Describe(), err, c.want)
		}
	}
}

// TestExampleScripts: every example script in testdata/migrations runs on the fixture it is
// named after, verified (Flink's judgement of the results is TestOracleScript and
// TestOracleFieldEvolution).
func TestExampleScripts(t *testing.T) {
	names, err := filepath.Glob(filepath.Join("..", "testdata", "migrations", "*.yaml"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no example scripts: %v", err)
	}
	for _, p := range names {
		name := filepath.Base(p)
		t.Run(name, func(t *testing.T) {
			steps := loadScript(t, name)
			_, rep := run(t, fixture(t, strings.TrimSuffix(name, ".yaml")), Options{}, steps...)
			if len(rep.Steps) != len(steps) {
				t.Fatalf("%d steps reported, want %d", len(rep.Steps), len(steps))
			}
		})
	}
}

// TestDryRunCountsFollowEarlierStateEdits: a retype after a state rename and a state drop reports
// in the dry run what the run reports (run compares them): the dry run scans the unchanged source,
// which still has the old names, so its counts must come from what the earlier steps did. Without
// STATECRAFT_ORACLE this is the check TestOracleStateEdits makes before its judge.
func TestDryRunCountsFollowEarlierStateEdits(t *testing.T) {
	op := mustSel(t, "uid:int-keyed")
	for _, first := range []Step{nil, &Rescale{MaxParallelism: 200, Parallelism: 1}} {
		steps := []Step{
			&RenameState{Operator: op, From: "names", To: "labels"},
			&DropState{Operator: op, State: "minmax"},
			&Retype{Operator: op, State: "count", To: "Integer"},
		}
		if first != nil {
			steps = append([]Step{first}, steps...)
		}
		run(t, fixture(t, "keyed-rocksdb-compressed"), Options{}, steps...)
	}
}
