package metadata

import (
	"bytes"
	"os"
	"testing"
)

// flink120Files lists the _metadata files of the savepoints Flink 1.20 wrote
// (testdata/flink-1.20/savepoints, made by FLINK_VERSION=1.20.0 testdata/oracle/run.sh savepoints).
func flink120Files(t testing.TB) []string {
	return globOrSkip(t, "../../testdata/flink-1.20/savepoints/*/_metadata",
		"no Flink 1.20 fixtures in testdata/flink-1.20/savepoints (FLINK_VERSION=1.20.0 testdata/oracle/run.sh savepoints)")
}

// TestFlink120RoundTrip: Flink 1.20 writes metadata version 4 (no operator names or UIDs, which
// came with version 5). Every such file must decode, carry no names, and re-encode to its exact
// bytes.
func TestFlink120RoundTrip(t *testing.T) {
	for _, f := range flink120Files(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(bytes.NewReader(data), f)
		if err != nil {
			t.Errorf("decode: %v", err)
			continue
		}
		if m.Version != 4 {
			t.Errorf("%s: version %d, want 4 (what Flink 1.20 writes)", f, m.Version)
		}
		if len(m.Operators) == 0 {
			t.Errorf("%s: no operators", f)
		}
		for _, op := range m.Operators {
			if op.Name != "" || op.UID != "" {
				t.Errorf("%s: operator %s has name %q uid %q, but version 4 stores neither", f, op.ID, op.Name, op.UID)
			}
		}
		checkReencodes(t, f, m, data)
	}
}
