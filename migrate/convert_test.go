package migrate

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// keyedLines decodes every keyed record of op as JSON lines (key group included), sorted.
func keyedLines(t *testing.T, sp *savepoint.Savepoint, op *metadata.OperatorState) []string {
	t.Helper()
	subs, closeAll, err := keyed.OpenSubtasks(sp, op)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	var out []string
	for _, s := range subs {
		err := s.Records(nil, func(r keyed.Record) error {
			b, err := r.AppendJSON(nil)
			out = append(out, string(b))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(out)
	return out
}

// TestConvertNative: every native fixture (Flink 2.3.0 and 1.20.0, incremental or not, inline
// files, max parallelism 256) converts to a canonical savepoint whose records are the native
// ones, record for record, in the same subtasks' key-group ranges; the savepoint properties say
// CANONICAL. cmd/statecraft's dump tests prove the native records are the State Processor API's.
func TestConvertNative(t *testing.T) {
	dirs := []string{"native-rocksdb", "native-types-incremental", "native-ttl-inline", "native-window-maxpar-256", "native-rescaled", "native-named-window", "native-ttl-compaction", "native-slot-window",
		"../flink-1.20/savepoints/native-rocksdb", "../flink-1.20/savepoints/native-types-incremental",
		"../flink-1.20/savepoints/native-named-window", "../flink-1.20/savepoints/native-ttl-inline", "../flink-1.20/savepoints/native-window-maxpar-256",
		"../flink-1.20/savepoints/native-rescaled"}
	for _, name := range dirs {
		t.Run(filepath.Base(name), func(t *testing.T) {
			src := fixture(t, name)
			dst, rep := run(t, src, Options{}, &Convert{})
			if len(rep.Steps) != 1 || len(rep.Steps[0].Operators) == 0 || len(rep.Verify) == 0 {
				t.Fatalf("report %+v: want one step converting operators, verified", rep)
			}
			in, err := savepoint.Open(src)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			out, err := savepoint.Open(dst)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			if f := out.Format(); f != savepoint.FormatCanonical {
				t.Fatalf("output format %s", f)
			}
			if p, err := out.Metadata.ParseProperties(dst); err != nil || p.FormatType != "CANONICAL" {
				t.Fatalf("output properties %+v, %v: want format type CANONICAL", p, err)
			}
			converted := 0
			for i, op := range in.Metadata.Operators {
				if !nativeKeyed(op) {
					continue
				}
				oop := out.Metadata.Operators[i]
				for _, st := range op.Subtasks {
					if got, want := oop.Subtask(st.Index).ManagedKeyed.KeyGroups(), st.ManagedKeyed.KeyGroups(); got != want {
						t.Errorf("%s subtask %d: range %+v, want %+v", Label(op), st.Index, got, want)
					}
				}
				a, b := keyedLines(t, in, op), keyedLines(t, out, oop)
				if strings.Join(a, "\n") != strings.Join(b, "\n") {
					t.Errorf("%s: %d records after conversion, %d before, or different ones", Label(op), len(b), len(a))
				}
				converted += len(a)
			}
			if converted == 0 {
				t.Fatal("no records converted")
			}
		})
	}
	// A canonical source has nothing to convert: refused rather than copied.
	if _, err := Run(fixture(t, "keyed-rocksdb"), filepath.Join(t.TempDir(), "x"), []Step{&Convert{}}, Options{}); err == nil ||
		!strings.Contains(err.Error(), "canonical already") {
		t.Errorf("converting a canonical savepoint: %v, want a refusal", err)
	}
}

// TestConvertFileMergedPlaceholders: in the file-merged checkpoints Flink 2.3.0 and 1.20.0 wrote,
// the stateless source's subtask holds only file merging's empty placeholder (tag 17, no state,
// naming the checkpoint's directories); the conversion drops it, so the source has no subtask
// state, as in a savepoint Flink takes of the same job, and nothing in the output names the
// source checkpoint's directories. TestOracleConvert has Flink restore the result.
func TestConvertFileMergedPlaceholders(t *testing.T) {
	for _, name := range []string{"../checkpoints/file-merged", "../flink-1.20/checkpoints/file-merged"} {
		t.Run(filepath.Dir(name), func(t *testing.T) {
			src := filepath.Join("..", "testdata", "savepoints", name)
			in, err := savepoint.Open(src)
			if err != nil {
				t.Skipf("fixture: %v", err)
			}
			defer in.Close()
			placeholders := map[metadata.OperatorID]bool{}
			for _, op := range in.Metadata.Operators {
				for _, st := range op.Subtasks {
					if oh, ok := st.ManagedOperator.(*metadata.OperatorStreamHandle); ok && oh.IsEmpty && st.ManagedKeyed == nil {
						placeholders[op.ID] = true
					}
				}
			}
			if len(placeholders) == 0 {
				t.Fatal("no operator with only an empty file-merging handle: the test would prove nothing")
			}
			dst, _ := run(t, src, Options{}, &Convert{})
			out, err := savepoint.Open(dst)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			for _, op := range out.Metadata.Operators {
				if placeholders[op.ID] && len(op.Subtasks) != 0 {
					t.Errorf("%s: %d subtask states left, want none", Label(op), len(op.Subtasks))
				}
				for _, st := range op.Subtasks {
					for _, h := range []metadata.OperatorHandle{st.ManagedOperator, st.RawOperator} {
						if oh, ok := h.(*metadata.OperatorStreamHandle); ok && oh.TagByte == metadata.TagSegmentPartitionableOpState {
							t.Errorf("%s subtask %d: a file-merging handle (dirs %s, %s) left in the canonical output", Label(op), st.Index, oh.TaskOwnedDir, oh.SharedDir)
						}
					}
				}
			}
		})
	}
}
