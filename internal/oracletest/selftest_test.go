package oracletest

import (
	"path/filepath"
	"testing"
)

// TestOracleJudgeSelfTests runs the oracle's proofs that its savepoint judge can fail: judge-selftest
// (a changed value, a dropped operator, a wrong max parallelism are each rejected) and
// judge-evolve-selftest (a Row or POJO field change that only the expectation declares is
// rejected, the same change written by Flink itself accepted). Each prints a row per case and
// exits non-zero when a verdict is not the expected one.
func TestOracleJudgeSelfTests(t *testing.T) {
	Require(t, "to prove the savepoint judge rejects what it must (Java 17, Maven, Flink)")
	root := filepath.Dir(filepath.Dir(filepath.Dir(Script(t))))
	sp := func(name string) string { return filepath.Join(root, "testdata", "savepoints", name) }
	for _, c := range []struct{ cmd, fixture string }{
		{"judge-selftest", "types-hashmap"},
		{"judge-evolve-selftest", "evolve-hashmap"},
	} {
		t.Run(c.cmd, func(t *testing.T) {
			t.Parallel()
			out, err := Run(t, c.cmd, t.TempDir(), sp(c.fixture), sp(c.fixture+".expect.json"))
			if err != nil {
				t.Fatalf("%s: %v\n%s", c.cmd, err, out)
			}
			t.Logf("%s", out)
		})
	}
}
