package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDiffSignalHelper is not a test of its own: TestDiffSignalRemovesSpills runs the test
// binary again with STATECRAFT_DIFF_SIGNAL_HELPER set, and this runs `savepoint diff A B` in that
// process with a spill budget of 2 KiB, holding it once side A is sorted (its runs on disk) until
// the parent's signal arrives.
func TestDiffSignalHelper(t *testing.T) {
	if os.Getenv("STATECRAFT_DIFF_SIGNAL_HELPER") == "" {
		t.Skip("run by TestDiffSignalRemovesSpills")
	}
	diffSpillBudget = 2 << 10
	diffSortedHook = func(side int) {
		fmt.Fprintf(os.Stderr, "sorted side %d, %d runs spilled\n", side, diffSpills.Load())
		select {} // until the signal ends the process
	}
	os.Exit(run([]string{"savepoint", "diff", os.Getenv("STATECRAFT_DIFF_A"), os.Getenv("STATECRAFT_DIFF_B")}, os.Stdout, os.Stderr))
}

// TestDiffSignalRemovesSpills (#16): a diff stopped by SIGINT or SIGTERM while its sorted runs
// are on disk (a max parallelism change makes it sort both sides) removes its spill directory
// from $TMPDIR before it exits with status 1, and says so.
func TestDiffSignalRemovesSpills(t *testing.T) {
	src := migrateFixture(t, "keyed-hashmap")
	dst := migrated(t, src, `  - rescale: {max-parallelism: 256}`)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			tmp := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestDiffSignalHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "STATECRAFT_DIFF_SIGNAL_HELPER=1", "TMPDIR="+tmp,
				"STATECRAFT_DIFF_A="+src, "STATECRAFT_DIFF_B="+dst)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			// Wait for the helper to hold with side A sorted (read with a deadline: a helper that
			// never gets there fails the test instead of hanging it).
			lines := make(chan string)
			go func() {
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			var log []string
			deadline := time.After(5 * time.Minute)
		wait:
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("the helper ended before it sorted side A:\n%s", strings.Join(log, "\n"))
					}
					log = append(log, l)
					if strings.HasPrefix(l, "sorted side 0,") {
						break wait
					}
				case <-deadline:
					t.Fatalf("the helper did not sort side A in 5 minutes:\n%s", strings.Join(log, "\n"))
				}
			}
			dirs, _ := filepath.Glob(filepath.Join(tmp, "statecraft-diff-*"))
			runs, _ := filepath.Glob(filepath.Join(tmp, "statecraft-diff-*", "run-*"))
			if len(dirs) != 1 || len(runs) == 0 {
				t.Fatalf("before the signal: spill directories %v with %d runs; want one with runs (%s)", dirs, len(runs), log[len(log)-1])
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			for l := range lines {
				log = append(log, l)
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Errorf("exit %v; want status 1", err)
			}
			if out := strings.Join(log, "\n"); !strings.Contains(out, "savepoint diff: stopped by "+sig.String()+"; its spill directories are removed") {
				t.Errorf("stderr does not say the diff stopped and removed its spills:\n%s", out)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "statecraft-diff-*")); len(left) > 0 {
				t.Errorf("spill directories left after %v: %v", sig, left)
			}
		})
	}
}
