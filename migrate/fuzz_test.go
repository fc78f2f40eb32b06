package migrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseScript feeds mutated migration scripts (seeded with the example script and one
// script per step kind and form) through ParseScript, and what parses through a dry run on the
// keyed-hashmap fixture Flink wrote. Neither may panic; a parse error names the script, and a
// parsed script has one describable step per list item.
func FuzzParseScript(f *testing.F) {
	seeds := []string{
		"steps:\n  - rename-uid: {from: \"uid:int-keyed\", to: b}\n",
		"steps:\n  - rename-uid:\n      renames:\n        - {from: \"uid:int-keyed\", to: x}\n        - {from: \"uid:source\", to: y}\n",
		"steps:\n  - rescale: {max-parallelism: 256, parallelism: 3, operators: [\"uid:int-keyed\"]}\n",
		"steps:\n  - retype: {operator: \"uid:int-keyed\", state: seen, to: Long}\n",
		"steps:\n  - retype: {operator: \"uid:int-keyed\", state: seen, key-to: Long}\n",
		"steps:\n  - rename-state: {operator: \"uid:int-keyed\", from: seen, to: seen2}\n",
		"steps:\n  - drop-state: {operator: \"uid:int-keyed\", state: seen}\n",
		"steps:\n  - drop-operator: {operator: \"hash:5534c038c66cc9b701311c8cdd8de69b\"}\n",
		"a: &a [*a]\nsteps: *a\n",
		"steps: []\n",
	}
	if b, err := os.ReadFile(filepath.Join("..", "testdata", "migrations", "keyed-hashmap.yaml")); err == nil {
		seeds = append(seeds, string(b))
	}
	for _, s := range seeds {
		f.Add(s)
	}
	src := filepath.Join("..", "testdata", "savepoints", "keyed-hashmap")
	haveSrc := true
	if _, err := os.Stat(filepath.Join(src, "_metadata")); err != nil {
		f.Logf("fixture %s not present: the dry-run half is skipped", src)
		haveSrc = false
	}
	dst := filepath.Join(os.TempDir(), "statecraft-fuzz-never-written")
	f.Fuzz(func(t *testing.T, script string) {
		steps, err := ParseScript(strings.NewReader(script), "fuzz.yaml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error does not name the script: %v", err)
			}
			return
		}
		if len(steps) == 0 {
			t.Fatal("a script parsed into no steps")
		}
		for i, st := range steps {
			if st == nil || st.Describe() == "" {
				t.Fatalf("step %d: %#v", i, st)
			}
		}
		if !haveSrc {
			return
		}
		// Refusals are expected (most mutated steps name nothing in the fixture); a panic or a
		// write is not.
		Run(src, dst, steps, Options{DryRun: true})
		if _, err := os.Stat(dst); err == nil {
			t.Fatalf("a dry run created %s", dst)
		}
	})
}
