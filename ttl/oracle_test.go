package ttl

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/internal/oracletest"
)

// TestOracleFlinkParsesEverythingWeWrite asks Flink 2.3.0 itself (the oracle's `durations` command)
// to parse a wide spread of TTL texts statecraft writes, and checks that each comes back as the
// same milliseconds. It starts a JVM, so it runs only with STATECRAFT_ORACLE=1.
func TestOracleFlinkParsesEverythingWeWrite(t *testing.T) {
	oracletest.Require(t, "to run against Flink (needs Java 17 and Maven)")
	var vals []int64
	for _, v := range []int64{0, 1, 999, 1000, 1001, 59999, 60000, 61000, 90000, 3599999, 3600000, 5400000,
		86399999, 86400000, 86400001, 90061000, 604800000, 9223372036854775807, 9223372036828800000,
		9223372036854775000, 9223372036854740000, 9223372036854720000} {
		vals = append(vals, v)
	}
	for i := int64(1); i < 1<<62; i = i*3 + 1 {
		for _, unit := range []int64{1, 1000, 60000, 3600000, 86400000} {
			if i <= (1<<63-1)/unit {
				vals = append(vals, i*unit)
			}
		}
	}
	var in bytes.Buffer
	for _, v := range vals {
		in.WriteString(FormatMillis(v) + "\n")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "written.txt")
	if err := os.WriteFile(file, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := oracletest.Exec(t, "", "durations", file)
	if err != nil {
		t.Fatalf("oracle durations: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(vals) {
		t.Fatalf("oracle printed %d lines for %d inputs", len(lines), len(vals))
	}
	for i, line := range lines {
		cols := strings.Split(line, "\t")
		want := strconv.FormatInt(vals[i], 10)
		if len(cols) < 4 || cols[1] != "ok" || cols[2] != want {
			t.Errorf("Flink reads %q as %q; want ok %s ms", FormatMillis(vals[i]), line, want)
			continue
		}
		if cols[3] != FormatMillis(vals[i]) {
			t.Errorf("Flink formats %s ms as %q; statecraft writes %q", want, cols[3], FormatMillis(vals[i]))
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("Flink 2.3.0 parsed all %d TTL texts statecraft wrote back to the same milliseconds", len(vals))
}
