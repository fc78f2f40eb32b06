package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// jobCopy copies the retained incremental checkpoint directory Flink wrote (chk-6, 7, 8) to a new
// place (its _metadata names the old one) and adds an in-progress chk-9.
func jobCopy(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "checkpoints", "native-chain")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("fixture: %v", err)
	}
	job := filepath.Join(t.TempDir(), "job")
	if out, err := exec.Command("cp", "-r", src, job).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	if err := os.Mkdir(filepath.Join(job, "chk-9"), 0o755); err != nil {
		t.Fatal(err)
	}
	return job
}

func TestCheckpointList(t *testing.T) {
	job := jobCopy(t)
	code, out, errs := runCLI("checkpoint", "list", "--json", job)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got struct {
		Checkpoints []struct {
			ID       int64  `json:"id"`
			Complete bool   `json:"complete"`
			Reason   string `json:"reason"`
		} `json:"checkpoints"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var ids []int64
	for _, c := range got.Checkpoints {
		ids = append(ids, c.ID)
		if c.Complete != (c.ID != 9) || (c.ID == 9) != strings.Contains(c.Reason, "no _metadata") {
			t.Errorf("chk-%d: complete %v reason %q", c.ID, c.Complete, c.Reason)
		}
	}
	if len(ids) != 4 || ids[0] != 6 || ids[3] != 9 {
		t.Errorf("ids %v, want 6..9", ids)
	}
	code, out, errs = runCLI("checkpoint", "list", job)
	if code != 0 || !strings.Contains(out, "why not") || !strings.Contains(out, "no _metadata") {
		t.Errorf("table: exit %d\n%s%s", code, out, errs)
	}
	if code, _, errs = runCLI("checkpoint", "list", filepath.Join(job, "shared")); code == 0 || !strings.Contains(errs, "no chk-N") {
		t.Errorf("not a job directory: exit %d: %s", code, errs)
	}
}

// TestCheckpointFlag: --checkpoint N picks chk-N for reading commands (inspect, check) and
// migrations; a flag that cannot take effect (a savepoint, an incomplete checkpoint) is an error.
func TestCheckpointFlag(t *testing.T) {
	job := jobCopy(t)
	for _, n := range []string{"6", "7"} {
		code, out, errs := runCLI("savepoint", "inspect", "--json", "--checkpoint", n, job)
		if code != 0 || !strings.Contains(out, `"checkpointId": `+n+",") {
			t.Errorf("inspect --checkpoint %s: exit %d: %.300s%s", n, code, out, errs)
		}
	}
	// savepoint check reads a checkpoint directory too: chk-7's keyed operator is state the SQL
	// job's plan does not claim (exit 2, would not restore)
	plan := filepath.Join("..", "..", "testdata", "plans", "group-aggregate.json")
	code, out, errs := runCLI("savepoint", "check", "--json", "--checkpoint", "7", job, "--plan", plan)
	if code != 2 || !strings.Contains(out, `"checkpointId": 7,`) || !strings.Contains(out, `"uid": "int-keyed"`) {
		t.Errorf("check --checkpoint 7: exit %d: %.400s%s", code, out, errs)
	}
	dst := filepath.Join(t.TempDir(), "out")
	code, _, errs = runCLI("migrate", "convert", "--checkpoint", "6", "-q", job, dst)
	if code != 0 {
		t.Fatalf("migrate convert --checkpoint 6: exit %d: %s", code, errs)
	}
	code, out, errs = runCLI("savepoint", "inspect", "--json", dst)
	if code != 0 || !strings.Contains(out, `"checkpointId": 6,`) || !strings.Contains(out, `"format": "canonical"`) {
		t.Errorf("converted chk-6: exit %d: %.400s%s", code, out, errs)
	}
	for _, c := range [][]string{
		{"savepoint", "dump", "--operator", "uid:int-keyed", "--checkpoint", "9", job},
		{"savepoint", "stats", "--checkpoint", "5", job},
		{"savepoint", "offsets", "--checkpoint", "1", filepath.Join("..", "..", "testdata", "savepoints", "keyed-hashmap")},
		{"migrate", "convert", "--checkpoint", "9", job, filepath.Join(t.TempDir(), "x")},
	} {
		code, _, errs := runCLI(c...)
		if code == 0 || !strings.Contains(errs, "--checkpoint") {
			t.Errorf("%v: exit %d: %s", c, code, errs)
		}
	}
}

// TestCheckpointGC: the command around savepoint.PlanGC (tested there file by file): a dry run
// lists and deletes nothing, files newer than --min-age are kept, --apply refuses while chk-9 is
// in progress, --force deletes, and the latest checkpoint still dumps the same records.
func TestCheckpointGC(t *testing.T) {
	job := jobCopy(t)
	_, before, _ := runCLI("savepoint", "dump", "--operator", "uid:int-keyed", job)
	for _, d := range []string{"chk-6", "chk-7"} { // their shared files stay behind, as after a kill
		if err := os.RemoveAll(filepath.Join(job, d)); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int { e, _ := os.ReadDir(filepath.Join(job, "shared")); return len(e) }
	n := count()
	// Just copied, every file is new: the default --min-age 1h keeps them all and says so.
	code, out, errs := runCLI("checkpoint", "gc", "--apply", "--force", job)
	if code != 0 || count() != n || !strings.Contains(out, "0 files, 0 bytes, deleted") || !strings.Contains(out, "kept for being modified less than --min-age 1h0m0s ago") {
		t.Fatalf("fresh files: exit %d, %d files left of %d: %s%s", code, count(), n, out, errs)
	}
	if code, _, errs := runCLI("checkpoint", "gc", "--min-age", "-1s", job); code == 0 || !strings.Contains(errs, "negative") {
		t.Errorf("--min-age -1s: exit %d: %s", code, errs)
	}
	old := time.Now().Add(-2 * time.Hour)
	shared, _ := os.ReadDir(filepath.Join(job, "shared"))
	for _, e := range shared {
		if err := os.Chtimes(filepath.Join(job, "shared", e.Name()), old, old); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs = runCLI("checkpoint", "gc", "--json", job)
	var got checkpointGCJSON
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || len(got.GC.Garbage) == 0 || got.Applied || count() != n {
		t.Fatalf("dry run: exit %d, %d files left of %d: %s%s", code, count(), n, out, errs)
	}
	if code, _, errs := runCLI("checkpoint", "gc", "--force", job); code == 0 || !strings.Contains(errs, "--force only applies with --apply") {
		t.Errorf("--force alone: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI("checkpoint", "gc", "--apply", job); code == 0 || !strings.Contains(errs, "checkpoint 9 is incomplete") || count() != n {
		t.Errorf("--apply with chk-9 in progress: exit %d, %d files left of %d: %s", code, count(), n, errs)
	}
	code, out, errs = runCLI("checkpoint", "gc", "--apply", "--force", job)
	if code != 0 || !strings.Contains(out, "deleted") || count() != n-len(got.GC.Garbage) {
		t.Fatalf("--apply --force: exit %d, %d files left of %d: %s%s", code, count(), n, out, errs)
	}
	if _, after, errs := runCLI("savepoint", "dump", "--operator", "uid:int-keyed", job); after != before || before == "" {
		t.Errorf("the latest checkpoint dumps differently after gc (%d vs %d bytes): %s", len(after), len(before), errs)
	}
}
