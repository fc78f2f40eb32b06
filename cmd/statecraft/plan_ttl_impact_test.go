package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseAt(t *testing.T) {
	now := time.UnixMilli(1_000_000_000_000)
	cases := []struct {
		in   string
		want int64
		err  bool
	}{
		{"", 1_000_000_000_000, false},
		{"now", 1_000_000_000_000, false},
		{"now+1h", 1_000_003_600_000, false},
		{"now-90 s", 999_999_910_000, false},
		{"1796012984200", 1796012984200, false},
		{"2026-11-30T04:29:53.728Z", 1796012993728, false},
		{"yesterday", 0, true},
		{"now+forever", 0, true},
	}
	for _, c := range cases {
		got, err := parseAt(c.in, now)
		if (err != nil) != c.err || (!c.err && got != c.want) {
			t.Errorf("parseAt(%q) = %d, %v; want %d (error %v)", c.in, got, err, c.want, c.err)
		}
	}
}

func upgradesDir(t *testing.T, name string) string {
	t.Helper()
	d := filepath.Join("..", "..", "testdata", "upgrades", name)
	if _, err := os.Stat(filepath.Join(d, "savepoint", "_metadata")); err != nil {
		t.Skipf("oracle fixture %s not present (make fixtures)", d)
	}
	return d
}

// The CLI reports what the bridge counts: at the newest write + TTL every entry is expired, a
// millisecond earlier not all; JSON and text agree.
func TestPlanTTLImpactCLI(t *testing.T) {
	d := upgradesDir(t, "agg-ttl")
	pl, sp := filepath.Join(d, "plan.json"), filepath.Join(d, "savepoint")
	code, out, errs := runCLI("plan", "ttl", "impact", pl, "--savepoint", sp, "--all", "--ttl", "10 s", "--json", "--at", "0")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		States []struct {
			State            string
			Known            bool
			Entries, Expired int64
			NewestMillis     int64
			NewTTLMs         int64 `json:"newTtlMillis"`
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.States) != 1 {
		t.Fatalf("json: %v\n%s", err, out)
	}
	s := r.States[0]
	if s.State != "accState" || !s.Known || s.Entries != 20 || s.Expired != 0 || s.NewTTLMs != 10_000 {
		t.Fatalf("at epoch 0: %+v", s)
	}
	edge := s.NewestMillis + 10_000
	for _, c := range []struct {
		at  int64
		all bool // every entry expired
	}{{edge, true}, {edge - 1, false}} {
		code, out, errs = runCLI("plan", "ttl", "impact", pl, "--savepoint", sp, "--set", "all=10s", "--at", strconv.FormatInt(c.at, 10))
		if code != exitOK || strings.Contains(out, "20 (100.0%)") != c.all || !strings.Contains(out, "1 h -> 10 s") {
			t.Errorf("at %d: exit %d, want all expired %v in\n%s%s", c.at, code, c.all, out, errs)
		}
	}
	// Without TTL in the savepoint: unknown, said so.
	u := upgradesDir(t, "agg-filter-added")
	code, out, errs = runCLI("plan", "ttl", "impact", filepath.Join(u, "old.plan.json"), "--savepoint", filepath.Join(u, "savepoint"), "--node", "3", "--ttl", "1h")
	if code != exitOK || !strings.Contains(out, "unknown") || !strings.Contains(out, "cannot be known") {
		t.Errorf("no-TTL savepoint: exit %d\n%s%s", code, out, errs)
	}
	// Usage errors exit 1.
	if code, _, _ = runCLI("plan", "ttl", "impact", pl, "--all", "--ttl", "1h"); code != exitFailure {
		t.Errorf("without --savepoint: exit %d, want %d", code, exitFailure)
	}
}

// plan upgrade and plan diff --savepoint write the same script; it names the savepoint's
// aggregate operator and NEW's UID; exit 0 since the savepoint then restores.
func TestPlanUpgradeCLI(t *testing.T) {
	d := upgradesDir(t, "agg-filter-added")
	oldp, newp, sp := filepath.Join(d, "old.plan.json"), filepath.Join(d, "new.plan.json"), filepath.Join(d, "savepoint")
	s1 := filepath.Join(t.TempDir(), "a.yaml")
	s2 := filepath.Join(t.TempDir(), "b.yaml")
	code, out, errs := runCLI("plan", "upgrade", oldp, newp, "--savepoint", sp, "-o", s1)
	if code != exitOK || !strings.Contains(out, "after the script: restores") || !strings.Contains(out, "as it is:        refused") {
		t.Fatalf("plan upgrade: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI("plan", "diff", oldp, newp, "--color", "never", "--savepoint", sp, "-o", s2)
	if code != exitOK || !strings.HasPrefix(out, "Verdict: uid-remap") {
		t.Fatalf("plan diff --savepoint: exit %d\n%s%s", code, out, errs)
	}
	a, b := string(readFile(t, s1)), string(readFile(t, s2))
	if a != b {
		t.Errorf("scripts differ:\n%s\n---\n%s", a, b)
	}
	if !strings.Contains(a, `{from: "hash:4f0fea56069e128b6efb5cf69722457e", to: "4_group-aggregate"}`) {
		t.Errorf("script does not rename the savepoint's 3_group-aggregate (4f0fea56...):\n%s", a)
	}
	if code, _, _ = runCLI("plan", "upgrade", oldp, newp); code != exitFailure {
		t.Errorf("without --savepoint: exit %d, want %d", code, exitFailure)
	}
}

// TestPlanUpgradeBlockedSaysSo (issue 18, messages): where the state's layout changed (Flink
// refused the catalogue's key-retyped change), plan upgrade prints the blocked node before any
// word about UIDs, never a bare "no operator needs a new UID", and its script says the same.
func TestPlanUpgradeBlockedSaysSo(t *testing.T) {
	d := upgradesDir(t, "agg-filter-added")
	newp := filepath.Join(filepath.Dir(d), "types", "key-retyped", "new.plan.json")
	script := filepath.Join(t.TempDir(), "s.yaml")
	code, out, errs := runCLI("plan", "upgrade", filepath.Join(d, "old.plan.json"), newp, "--savepoint", filepath.Join(d, "savepoint"), "-o", script)
	blocked := strings.Index(out, "blocked stream-exec-group-aggregate")
	none := strings.Index(out, "no rename can carry the blocked state over")
	if code != exitFindings || blocked < 0 || none < blocked || strings.Contains(out, "  no operator needs a new UID") {
		t.Fatalf("plan upgrade: exit %d (want %d)\n%s%s", code, exitFindings, out, errs)
	}
	s := string(readFile(t, script))
	if !strings.Contains(s, "# blocked stream-exec-group-aggregate") || strings.Contains(s, "no operator of the savepoint needs a new UID") {
		t.Errorf("script:\n%s", s)
	}
}
