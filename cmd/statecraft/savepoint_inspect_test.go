package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/uid"
)

// savepointFixtures returns the oracle's savepoint directories with their expectation files.
func savepointFixtures(t testing.TB) map[string]string {
	t.Helper()
	dirs, _ := filepath.Glob("../../testdata/savepoints/*/_metadata")
	out := map[string]string{}
	for _, m := range dirs {
		dir := filepath.Dir(m)
		exp := dir + ".expect.json"
		if _, err := os.Stat(exp); err == nil {
			out[dir] = exp
		}
	}
	if len(out) == 0 {
		t.Skip("no savepoint fixtures with expectations in testdata/savepoints yet (made by testdata/oracle/run.sh savepoints)")
	}
	return out
}

type expectation struct {
	Format   string                  `json:"format"`
	Metadata []savepoint.MetadataRow `json:"metadata"`
}

func readExpectation(t testing.TB, path string) expectation {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var e expectation
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return e
}

// TestInspectMatchesFlink compares `savepoint inspect --json` and --csv with the rows Flink's
// savepoint_metadata() produced for every fixture.
func TestInspectMatchesFlink(t *testing.T) {
	for dir, exp := range savepointFixtures(t) {
		want := readExpectation(t, exp)
		var stdout, stderr bytes.Buffer
		if code := run([]string{"savepoint", "inspect", dir, "--json"}, &stdout, &stderr); code != exitOK {
			t.Errorf("%s: exit %d: %s", dir, code, stderr.String())
			continue
		}
		var got inspectOutput
		if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		var rows []savepoint.MetadataRow
		for _, op := range got.Operators {
			rows = append(rows, op.MetadataRow)
		}
		if !reflect.DeepEqual(rows, want.Metadata) {
			g, _ := json.MarshalIndent(rows, "", " ")
			w, _ := json.MarshalIndent(want.Metadata, "", " ")
			t.Errorf("%s: savepoint_metadata rows differ\n got: %s\nwant: %s", dir, g, w)
		}
		if want.Format != "" && got.Format != want.Format {
			t.Errorf("%s: format %q, want %q", dir, got.Format, want.Format)
		}

		// CSV: the same rows, NULL as an empty field.
		stdout.Reset()
		if code := run([]string{"savepoint", "inspect", "--csv", filepath.Join(dir, "_metadata")}, &stdout, &stderr); code != exitOK {
			t.Errorf("%s --csv: exit %d: %s", dir, code, stderr.String())
			continue
		}
		recs, err := csv.NewReader(&stdout).ReadAll()
		if err != nil {
			t.Fatalf("%s --csv: %v", dir, err)
		}
		if len(recs) != len(want.Metadata)+1 || !reflect.DeepEqual(recs[0], savepoint.MetadataColumns) {
			t.Errorf("%s --csv: %d records, header %v", dir, len(recs), recs[0])
			continue
		}
		for i, r := range want.Metadata {
			if !reflect.DeepEqual(recs[i+1], rowFields(r, "")) {
				t.Errorf("%s --csv row %d: %v, want %v", dir, i, recs[i+1], rowFields(r, ""))
			}
		}

		// The table names every operator's uid hash.
		stdout.Reset()
		if code := run([]string{"savepoint", "inspect", dir}, &stdout, &stderr); code != exitOK {
			t.Errorf("%s (table): exit %d", dir, code)
		}
		for _, r := range want.Metadata {
			if !strings.Contains(stdout.String(), r.OperatorUIDHash) {
				t.Errorf("%s (table): no row for %s", dir, r.OperatorUIDHash)
			}
		}
	}
}

// TestInspectUIDHashes checks uid.Hash against the OperatorIDs Flink stored for operators with
// a UID (vectors from the oracle's fixtures).
func TestInspectUIDHashes(t *testing.T) {
	n := 0
	for _, exp := range savepointFixtures(t) {
		for _, r := range readExpectation(t, exp).Metadata {
			if r.OperatorUID == nil {
				continue
			}
			n++
			if got := uid.Hash(*r.OperatorUID); got != r.OperatorUIDHash {
				t.Errorf("%s: uid %q hashes to %s, Flink stored %s", exp, *r.OperatorUID, got, r.OperatorUIDHash)
			}
		}
	}
	if n == 0 {
		t.Error("no fixture operator has a UID")
	}
}

func TestInspectErrors(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"savepoint", "inspect", dir}, &stdout, &stderr); code != exitFailure || !strings.Contains(stderr.String(), "_metadata") {
		t.Errorf("empty dir: exit %d, stderr %q", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"savepoint", "inspect"}, &stdout, &stderr); code != exitFailure {
		t.Errorf("no argument: exit %d", code)
	}
	os.WriteFile(filepath.Join(dir, "_metadata"), []byte("not a savepoint"), 0o644)
	stderr.Reset()
	if code := run([]string{"savepoint", "inspect", dir}, &stdout, &stderr); code != exitFailure || !strings.Contains(stderr.String(), "offset 0: magic") {
		t.Errorf("garbage: exit %d, stderr %q", code, stderr.String())
	}
}

// BenchmarkInspect1000x128 inspects a _metadata of 1,000 operators of parallelism 128. The
// operators copy the shape of a real fixture's keyed operator (tag 7 key-groups handles on a
// relative state file, which is there too), so the file has the handle mix Flink writes; the
// target is under 100 ms per inspect. "full" is the command as it runs (it also reads one
// keyed-state header per operator for the state list); "metadata" is the savepoint_metadata part
// alone (decode _metadata, compute the rows, print the table).
func BenchmarkInspect1000x128(b *testing.B) {
	dir := b.TempDir()
	writeBigMetadata(b, dir, 1000, 128)
	run := func(b *testing.B) {
		cpu0 := cpuTime()
		defer func() { b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op") }()
		for i := 0; i < b.N; i++ {
			out, err := loadInspect(dir, false, savepoint.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if err := writeInspectText(io.Discard, out); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("full", run)
	b.Run("metadata", func(b *testing.B) {
		saved := inspectKeyedStates
		inspectKeyedStates = nil
		defer func() { inspectKeyedStates = saved }()
		run(b)
	})
}

// cpuTime is the process's user+system CPU time: on a loaded machine it shows what inspect
// costs better than wall time does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writeBigMetadata encodes nOps operators of parallelism par, each a copy of the richest
// operator found in the fixtures, with distinct UIDs and key-group ranges split as Flink would.
func writeBigMetadata(b testing.TB, dir string, nOps, par int) {
	var seed *metadata.Metadata
	var shape *metadata.SubtaskState
	var seedDir string
	for fixture := range savepointFixtures(b) {
		sp, err := savepoint.Open(fixture)
		if err != nil {
			b.Fatal(err)
		}
		sp.Close()
		for _, op := range sp.Metadata.Operators {
			// The usual production shape: keyed state in a file beside _metadata (tag 7 -> tag 6).
			for _, st := range op.Subtasks {
				if kg, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle); ok && shape == nil {
					if _, rel := kg.Delegate.(*metadata.RelativeFileHandle); rel {
						seed, shape = sp.Metadata, st
						seedDir = fixture
					}
				}
			}
		}
	}
	if shape == nil {
		b.Skip("no fixture with keyed state in a relative file")
	}
	// The state file the handles name, so that inspect reads real keyed-state headers.
	rel := shape.ManagedKeyed.(*metadata.KeyGroupsHandle).Delegate.(*metadata.RelativeFileHandle)
	data, err := os.ReadFile(filepath.Join(seedDir, rel.Path))
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rel.Path), data, 0o644); err != nil {
		b.Fatal(err)
	}
	kg := shape.ManagedKeyed.(*metadata.KeyGroupsHandle)
	var f *os.File
	m := &metadata.Metadata{Version: seed.Version, CheckpointID: seed.CheckpointID, Tail: seed.Tail}
	const maxPar = 128 * 8
	for i := 0; i < nOps; i++ {
		name := fmt.Sprintf("op-%04d", i)
		op := &metadata.OperatorState{Name: "KeyedProcess " + name, UID: name, ID: uid.OperatorID(name),
			Parallelism: int32(par), MaxParallelism: maxPar}
		for s := 0; s < par; s++ {
			start, end := s*maxPar/par, (s+1)*maxPar/par
			h := *kg
			h.Range = metadata.KeyGroupRange{Start: int32(start), Num: int32(end - start)}
			h.Offsets = make([]int64, end-start)
			for j := range h.Offsets {
				h.Offsets[j] = int64(j * 16)
			}
			st := *shape
			st.Index = int32(s)
			st.ManagedKeyed = &h
			op.Subtasks = append(op.Subtasks, &st)
		}
		m.Operators = append(m.Operators, op)
	}
	f, err = os.Create(filepath.Join(dir, "_metadata"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := metadata.Encode(f, m); err != nil {
		b.Fatal(err)
	}
}

// TestInspectStatesMatchFlink: the states inspect lists for each operator are the ones the
// oracle's jobs declared and Flink's State Processor API read back: operator states (name and
// distribution mode, from _metadata) always, keyed states (name, kind, key/value/user-key types,
// TTL) when the keyed-state reader is wired in.
func TestInspectStatesMatchFlink(t *testing.T) {
	type expState struct {
		Name        string  `json:"name"`
		Kind        string  `json:"kind"`
		Mode        string  `json:"mode"`
		KeyType     *string `json:"keyType"`
		ValueType   string  `json:"valueType"`
		UserKeyType *string `json:"userKeyType"`
		TTL         bool    `json:"ttl"`
	}
	type expOp struct {
		UIDHash        string     `json:"uidHash"`
		KeyedStates    []expState `json:"keyedStates"`
		OperatorStates []expState `json:"operatorStates"`
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	// Type names are compared loosely: spacing, packages and RowData field lists are the keyed
	// reader's formatting (its own tests hold it to the oracle's names).
	typ := func(s string) string {
		s = strings.ReplaceAll(s, " ", "")
		if strings.HasPrefix(s, "RowData") {
			return "RowData"
		}
		if i := strings.LastIndexByte(s, '.'); i >= 0 && !strings.ContainsAny(s, "<>") {
			s = s[i+1:]
		}
		return s
	}
	for dir, exp := range savepointFixtures(t) {
		data, err := os.ReadFile(exp)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Format    string  `json:"format"`
			Operators []expOp `json:"operators"`
		}
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatal(err)
		}
		out, err := loadInspect(dir, false, savepoint.Options{})
		if err != nil {
			t.Fatal(err)
		}
		byHash := map[string]inspectOperator{}
		for _, op := range out.Operators {
			byHash[op.OperatorUIDHash] = op
		}
		for _, eo := range e.Operators {
			op, ok := byHash[eo.UIDHash]
			if !ok {
				t.Errorf("%s: no operator %s", dir, eo.UIDHash)
				continue
			}
			var want, got []string
			for _, s := range eo.OperatorStates {
				want = append(want, s.Name+" "+s.Mode)
			}
			keyed := inspectKeyedStates != nil && e.Format == "canonical"
			if keyed {
				for _, s := range eo.KeyedStates {
					want = append(want, fmt.Sprintf("%s %s key=%s value=%s userKey=%s ttl=%v", s.Name, s.Kind, typ(str(s.KeyType)), typ(s.ValueType), typ(str(s.UserKeyType)), s.TTL))
				}
			}
			for _, s := range op.States {
				switch {
				case s.Kind == "split" || s.Kind == "union" || s.Kind == "broadcast":
					got = append(got, s.Name+" "+s.Kind)
				case keyed && !strings.HasPrefix(s.Kind, "timer"):
					got = append(got, fmt.Sprintf("%s %s key=%s value=%s userKey=%s ttl=%v", s.Name, s.Kind, typ(s.KeyType), typ(s.ValueType), typ(s.UserKeyType), s.TTL))
				}
			}
			sort.Strings(want)
			sort.Strings(got)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s operator %s states:\n got %q\nwant %q", dir, eo.UIDHash, got, want)
			}
		}
	}
}

// TestInspectSubtasks: --subtasks lists, per subtask, handles whose key-group ranges tile the
// operator's key groups and whose sizes add up to the savepoint_metadata total Flink reported.
func TestInspectSubtasks(t *testing.T) {
	for dir, exp := range savepointFixtures(t) {
		want := readExpectation(t, exp)
		var stdout, stderr bytes.Buffer
		if code := run([]string{"savepoint", "inspect", dir, "--json", "--subtasks"}, &stdout, &stderr); code != exitOK {
			t.Fatalf("%s: exit %d: %s", dir, code, stderr.String())
		}
		var got inspectOutput
		if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		for i, op := range got.Operators {
			var total int64
			next := int32(0)
			for _, st := range op.Subtasks {
				total += st.CheckpointedSize
				for _, h := range st.Handles {
					if h.Slot != "managedKeyed" {
						continue
					}
					var start, end int32
					if _, err := fmt.Sscanf(h.KeyGroups, "[%d, %d]", &start, &end); err != nil || start != next {
						t.Errorf("%s %s subtask %d: key groups %q, want a range starting at %d", dir, op.OperatorUIDHash, st.Index, h.KeyGroups, next)
					}
					next = end + 1
				}
			}
			if total != want.Metadata[i].TotalSizeInBytes-want.Metadata[i].CoordinatorStateSizeInBytes {
				t.Errorf("%s %s: subtask sizes add up to %d, Flink's total is %d", dir, op.OperatorUIDHash, total, want.Metadata[i].TotalSizeInBytes)
			}
			if next != 0 && next != op.MaxParallelism {
				t.Errorf("%s %s: keyed ranges end at %d, max parallelism %d", dir, op.OperatorUIDHash, next, op.MaxParallelism)
			}
		}
		stdout.Reset()
		if code := run([]string{"savepoint", "inspect", dir, "--subtasks"}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "subtasks:") {
			t.Errorf("%s: table with --subtasks: exit %d", dir, code)
		}
	}
}
