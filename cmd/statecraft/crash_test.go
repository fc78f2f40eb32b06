package main

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/statecraft/statecraft/internal/crashtest"
	"github.com/statecraft/statecraft/internal/plangen"
	"github.com/statecraft/statecraft/internal/safeio"
	"github.com/statecraft/statecraft/migrate"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// crashMigrations are the migrations the kill test interrupts: rescales rewrite every keyed
// state file (several per savepoint), a UID rename hard-links the source's files into the
// output, so a kill can land while either kind of file is being brought in.
var crashMigrations = []struct {
	fixture string
	args    []string // SRC and DST are appended
}{
	{"keyed-par3", []string{"migrate", "rescale", "--max-parallelism", "256", "--parallelism", "2"}},
	{"keyed-rocksdb", []string{"migrate", "rescale", "--max-parallelism", "512", "--parallelism", "3"}},
	{"keyed-hashmap", []string{"migrate", "uid", "--rename", "uid:int-keyed=uid:counter-v2"}},
	// The example script: UID rename, rescale to 256/3 and two value retypes in one run.
	{"keyed-hashmap", []string{"migrate", "run", filepath.Join(crashtest.RepoRoot(), "testdata", "migrations", "keyed-hashmap.yaml")}},
}

// digestOf reads a savepoint directory with statecore and sums every entry (migrate's own
// verification digest): a complete output reads and sums like the reference output.
func digestOf(t *testing.T, dir string) (migrate.Digest, error) {
	t.Helper()
	sp, err := savepoint.Open(dir)
	if err != nil {
		return nil, err
	}
	defer sp.Close()
	return migrate.DigestOf(sp)
}

// TestCrashMigrateSIGKILL kills `statecraft migrate` (rescale, uid, and the example script run)
// with SIGKILL at many moments (at random
// times after the start, and just after the staging directory appears) and checks after each
// kill that the source is byte-identical, that DST is either absent or a complete savepoint
// that statecore reads with the same entries as an uninterrupted run's output, that whatever
// else is left is a recognisable staging directory, and that a new run to the same DST then
// succeeds despite the leftovers.
func TestCrashMigrateSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test builds the binary and runs it 80+ times")
	}
	bin := crashtest.Build(t)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	const trialsPer = 20
	var killedMidStage, absent, complete int
	for _, m := range crashMigrations {
		fx := filepath.Join(crashtest.RepoRoot(), "testdata", "savepoints", m.fixture)
		if _, err := os.Stat(filepath.Join(fx, "_metadata")); err != nil {
			t.Skipf("fixture %s not present", fx)
		}
		work := t.TempDir()
		src := filepath.Join(work, "src")
		crashtest.CopyTree(t, fx, src)
		srcTree := crashtest.Snapshot(t, src)

		// The reference: an uninterrupted run, for the expected digest and the run time.
		ref := filepath.Join(work, "ref")
		r := crashtest.RunKill(t, bin, append(append([]string{}, m.args...), src, ref), nil)
		if r.Killed || r.ExitCode != 0 {
			t.Fatalf("%s: reference run: exit %d\n%s", m.fixture, r.ExitCode, r.Stderr)
		}
		want, err := digestOf(t, ref)
		if err != nil {
			t.Fatalf("%s: reference output: %v", m.fixture, err)
		}
		span := r.Elapsed

		for i := 0; i < trialsPer; i++ {
			parent := filepath.Join(work, fmt.Sprintf("trial%02d", i))
			if err := os.Mkdir(parent, 0o755); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(parent, "out")
			var trigger func(time.Time, <-chan struct{})
			var how string
			if i%2 == 0 {
				d := time.Duration(rng.Int63n(int64(span) + 1))
				trigger, how = crashtest.After(d), fmt.Sprintf("kill %v after start", d)
			} else {
				d := time.Duration(rng.Int63n(int64(span)/4 + 1))
				trigger, how = crashtest.WhenExists(dst+".statecraft-tmp-*", d), fmt.Sprintf("kill %v after the staging directory appeared", d)
			}
			r := crashtest.RunKill(t, bin, append(append([]string{}, m.args...), src, dst), trigger)
			label := fmt.Sprintf("%s trial %d (%s, killed %v)", m.fixture, i, how, r.Killed)
			if !r.Killed && r.ExitCode != 0 {
				t.Fatalf("%s: exit %d\n%s", label, r.ExitCode, r.Stderr)
			}
			if d := srcTree.Diff(crashtest.Snapshot(t, src)); d != "" {
				t.Fatalf("%s: the source changed:\n%s", label, d)
			}
			leftovers := checkLeftovers(t, label, parent, "out")
			if r.Killed && leftovers > 0 {
				killedMidStage++
			}
			if _, err := os.Stat(dst); err != nil {
				absent++
				// A later run is not blocked by what the killed one left.
				r2 := crashtest.RunKill(t, bin, append(append([]string{}, m.args...), src, dst), nil)
				if r2.Killed || r2.ExitCode != 0 {
					t.Fatalf("%s: the run after the kill failed: exit %d\n%s", label, r2.ExitCode, r2.Stderr)
				}
			} else {
				complete++
			}
			got, err := digestOf(t, dst)
			if err != nil {
				t.Fatalf("%s: DST exists but is not a readable savepoint: %v", label, err)
			}
			if _, diff := migrate.Compare(want, got); diff != "" {
				t.Fatalf("%s: DST differs from an uninterrupted run's output: %s", label, diff)
			}
			if d := srcTree.Diff(crashtest.Snapshot(t, src)); d != "" {
				t.Fatalf("%s: the source changed:\n%s", label, d)
			}
		}
	}
	t.Logf("%d trials: %d left no DST (then a new run succeeded), %d left a complete DST; %d kills left a staging directory behind",
		trialsPer*len(crashMigrations), absent, complete, killedMidStage)
	if absent == 0 || killedMidStage == 0 {
		t.Fatalf("no kill landed before the output was in place (%d absent, %d mid-stage): the test did not test anything", absent, killedMidStage)
	}
}

// checkLeftovers fails unless every entry of parent other than dstName is a staging directory
// or temporary file named so that a later run (or a person) can tell it is one; it returns how
// many there are.
func checkLeftovers(t *testing.T, label, parent, dstName string) int {
	t.Helper()
	ents, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		switch {
		case e.Name() == dstName:
		case strings.HasPrefix(e.Name(), dstName+".statecraft-tmp-") || safeio.IsTemp(e.Name()):
			n++
		default:
			t.Fatalf("%s: unrecognisable leftover %s in %s", label, e.Name(), parent)
		}
	}
	return n
}

// TestCrashMigrateConcurrent starts two migrations to the same DST at once, many times: exactly
// one may win (unless both are refused), the other fails with an error that names DST, and DST
// is the winner's complete output.
func TestCrashMigrateConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := crashtest.Build(t)
	fx := filepath.Join(crashtest.RepoRoot(), "testdata", "savepoints", "keyed-par3")
	if _, err := os.Stat(filepath.Join(fx, "_metadata")); err != nil {
		t.Skipf("fixture %s not present", fx)
	}
	work := t.TempDir()
	src := filepath.Join(work, "src")
	crashtest.CopyTree(t, fx, src)
	srcTree := crashtest.Snapshot(t, src)
	args := []string{"migrate", "rescale", "--max-parallelism", "256", "--parallelism", "2", src}
	ref := filepath.Join(work, "ref")
	if r := crashtest.RunKill(t, bin, append(append([]string{}, args...), ref), nil); r.ExitCode != 0 {
		t.Fatalf("reference run: %s", r.Stderr)
	}
	want, err := digestOf(t, ref)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		parent := filepath.Join(work, fmt.Sprintf("race%02d", i))
		os.Mkdir(parent, 0o755)
		dst := filepath.Join(parent, "out")
		if i%2 == 1 {
			os.Mkdir(dst, 0o755) // an empty DST is accepted: both may see it empty
		}
		var wg sync.WaitGroup
		res := make([]crashtest.Result, 2)
		for k := range res {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[k] = crashtest.RunKill(t, bin, append(append([]string{}, args...), dst), nil)
			}()
		}
		wg.Wait()
		wins := 0
		for k, r := range res {
			switch {
			case r.ExitCode == 0:
				wins++
			case r.ExitCode == 1 && strings.Contains(r.Stderr, dst):
			default:
				t.Fatalf("race %d run %d: exit %d without naming %s:\n%s", i, k, r.ExitCode, dst, r.Stderr)
			}
		}
		if wins != 1 {
			t.Fatalf("race %d: %d runs succeeded, want exactly 1:\n%s\n%s", i, wins, res[0].Stderr, res[1].Stderr)
		}
		got, err := digestOf(t, dst)
		if err != nil {
			t.Fatalf("race %d: DST: %v", i, err)
		}
		if _, diff := migrate.Compare(want, got); diff != "" {
			t.Fatalf("race %d: DST: %s", i, diff)
		}
		if n := checkLeftovers(t, fmt.Sprintf("race %d", i), parent, "out"); n != 0 {
			t.Fatalf("race %d: the losing run left %d staging entries behind after a clean failure", i, n)
		}
	}
	if d := srcTree.Diff(crashtest.Snapshot(t, src)); d != "" {
		t.Fatalf("the source changed:\n%s", d)
	}
}

// TestCrashPlanTTLSetInPlace kills `statecraft plan ttl set` (in place, on a large synthetic
// plan) at random moments: the file afterwards is byte for byte either the old plan or the
// new one, and the only other thing in its directory may be a recognisable temporary file.
func TestCrashPlanTTLSetInPlace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := crashtest.Build(t)
	dir := t.TempDir()
	old := plangen.Generate(plangen.Options{Nodes: 5000, Seed: 7})
	path := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"plan", "ttl", "set", path, "--all", "--ttl", "3 d", "--force"}
	// The new plan: one uninterrupted run on a copy.
	refPath := filepath.Join(t.TempDir(), "plan.json")
	os.WriteFile(refPath, old, 0o644)
	r := crashtest.RunKill(t, bin, []string{"plan", "ttl", "set", refPath, "--all", "--ttl", "3 d", "--force"}, nil)
	if r.ExitCode != 0 && r.ExitCode != exitWarnings {
		t.Fatalf("reference run: exit %d\n%s", r.ExitCode, r.Stderr)
	}
	want, _ := os.ReadFile(refPath)
	if string(want) == string(old) {
		t.Fatal("the reference run changed nothing: pick a TTL the plan does not have")
	}
	span := r.Elapsed
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	var olds, news, temps int
	for i := 0; i < 60; i++ {
		if err := os.WriteFile(path, old, 0o644); err != nil {
			t.Fatal(err)
		}
		var trigger func(time.Time, <-chan struct{})
		if i%2 == 0 {
			trigger = crashtest.After(time.Duration(rng.Int63n(int64(span) + 1)))
		} else {
			trigger = crashtest.WhenExists(filepath.Join(dir, safeio.TempPrefix+"*"), time.Duration(rng.Int63n(int64(span)/8+1)))
		}
		r := crashtest.RunKill(t, bin, args, trigger)
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("trial %d: %v", i, err)
		}
		switch string(got) {
		case string(old):
			olds++
		case string(want):
			news++
		default:
			t.Fatalf("trial %d (killed %v): the plan is neither the old nor the new file (%d bytes)", i, r.Killed, len(got))
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.Name() == "plan.json" {
				continue
			}
			if !safeio.IsTemp(e.Name()) {
				t.Fatalf("trial %d: unrecognisable leftover %s", i, e.Name())
			}
			temps++
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	t.Logf("60 trials: %d left the old plan, %d the new one; %d temporary files were left by kills", olds, news, temps)
	if olds == 0 {
		t.Fatal("no kill landed before the rename: the test did not test anything")
	}
}
