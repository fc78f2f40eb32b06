package migrate

import (
	"strings"
	"testing"
	"time"
)

// TestHostileScripts: migration scripts built to exhaust the YAML parser (deep nesting within the
// 1 MiB size limit, alias expansion, a document over the limit) are refused within seconds, with
// the script's name, without a crash.
func TestHostileScripts(t *testing.T) {
	// Ten levels of nine-fold aliases: 9^10 strings if expanded, inside a step's field.
	laughs := "steps:\n  - rescale:\n      max-parallelism: 1\n      operators: &a [\"uid:x\", \"uid:x\", \"uid:x\", \"uid:x\", \"uid:x\", \"uid:x\", \"uid:x\", \"uid:x\", \"uid:x\"]\n"
	prev := "a"
	for i := 0; i < 9; i++ {
		name := string(rune('b' + i))
		laughs += "  - rescale:\n      max-parallelism: 1\n      operators: &" + name + " [" + strings.Repeat("*"+prev+", ", 8) + "*" + prev + "]\n"
		prev = name
	}
	cases := []struct{ name, script string }{
		{"flow sequences nested 1,000,000 deep", "steps: " + strings.Repeat("[", 1_000_000)},
		{"flow mappings nested 250,000 deep", "steps: " + strings.Repeat("{a: ", 250_000)},
		{"block sequences nested 1,000 deep", "steps:\n" + func() string {
			var b strings.Builder
			for i := 0; i < 1000; i++ {
				b.WriteString(strings.Repeat(" ", i) + "-\n")
			}
			return b.String()
		}()},
		{"billion laughs", laughs},
		{"larger than 1 MiB", "steps:\n" + strings.Repeat("  - drop-operator: {operator: \"uid:x\"}\n", 40_000)},
	}
	for _, c := range cases {
		start := time.Now()
		_, err := ParseScript(strings.NewReader(c.script), "hostile.yaml")
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !strings.HasPrefix(err.Error(), "hostile.yaml") {
			t.Errorf("%s: error does not name the script: %v", c.name, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", c.name, d)
		}
		t.Logf("%s: %v (%v)", c.name, err, time.Since(start).Round(time.Millisecond))
	}
}
