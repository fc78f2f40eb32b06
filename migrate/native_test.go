package migrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/uid"
)

// TestNativeSource: a rescale and a UID change (alone, and together as a script would run them)
// take a native savepoint and a retained incremental checkpoint directory as SRC and write a
// canonical savepoint holding, per operator, exactly the records a plain conversion holds (which
// TestConvertNative and the dump tests tie to the State Processor API's reading). Nothing is left
// beside DST.
func TestNativeSource(t *testing.T) {
	for _, src := range []string{fixture(t, "native-rocksdb"), filepath.Join("..", "testdata", "checkpoints", "native-chain")} {
		if _, err := os.Stat(src); err != nil {
			t.Skipf("fixture: %v", err)
		}
		conv, _ := run(t, src, Options{}, &Convert{})
		ref := open(t, conv)
		for _, c := range []struct {
			name  string
			steps []Step
		}{
			{"rescale", []Step{&Rescale{MaxParallelism: 256, Parallelism: 3}}},
			{"uid", []Step{&RenameUIDs{Renames: []Rename{{mustSel(t, "uid:int-keyed"), "int-keyed-v2"}}}}},
			{"uid+rescale", []Step{&RenameUIDs{Renames: []Rename{{mustSel(t, "uid:int-keyed"), "int-keyed-v2"}}},
				&Rescale{MaxParallelism: 64}}},
		} {
			t.Run(filepath.Base(src)+"/"+c.name, func(t *testing.T) {
				dst, rep := run(t, src, Options{}, c.steps...)
				if len(rep.Steps) != len(c.steps)+1 || !strings.Contains(rep.Steps[0].Step, "convert") {
					t.Errorf("report steps %d (first %q), want the conversion and %d", len(rep.Steps), rep.Steps[0].Step, len(c.steps))
				}
				out := open(t, dst)
				compared := 0
				for _, op := range ref.Metadata.Operators {
					id := op.ID
					if op.UID == "int-keyed" && strings.HasPrefix(c.name, "uid") {
						id = uid.OperatorID("int-keyed-v2")
					}
					got, err := Selector{ID: id}.find(out.Metadata)
					if err != nil {
						t.Fatalf("operator %s (as %s): %v", Label(op), id, err)
					}
					if nativeKeyed(got) {
						t.Errorf("operator %s: still native", Label(got))
					}
					if want := records(t, ref, op); len(want) > 0 {
						sameMultiset(t, Label(op), want, records(t, out, got))
						compared++
					}
				}
				if compared == 0 {
					t.Error("no operator with records compared")
				}
				ents, _ := os.ReadDir(filepath.Dir(dst))
				if len(ents) != 1 {
					t.Errorf("beside DST: %v, want only DST", ents)
				}
			})
		}
	}
}
