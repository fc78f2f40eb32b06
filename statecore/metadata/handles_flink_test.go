package metadata

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestFlinkHandles checks every handle tag Flink 2.3.0 can write (1, 2, 4, 6, 7, 9, 11, 12, 13,
// 14, 15, 16, 17 and the channel handles, plain and merged) against Flink's own serializers: the
// oracle builds a CheckpointMetadata holding each of them and stores it with
// MetadataV3..V6Serializer into testdata/metadata-handles/<variant>/_metadata, and writes
// testdata/metadata-handles/sizes.tsv with, per file and operator, what Flink's OperatorState
// reports:
//
//	variant <TAB> operatorId <TAB> getStates().size() <TAB> getCheckpointedSize() <TAB> getStateSize()
//
// Each file must round-trip byte for byte and give Flink's numbers.
func TestFlinkHandles(t *testing.T) {
	dir := "../../testdata/metadata-handles"
	files, _ := filepath.Glob(filepath.Join(dir, "*", "_metadata"))
	if len(files) == 0 {
		t.Skip("no testdata/metadata-handles yet (the oracle stores a metadata with every handle type through Flink's serializers)")
	}
	want := map[string][]string{} // variant/operatorId -> fields
	if f, err := os.Open(filepath.Join(dir, "sizes.tsv")); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Split(sc.Text(), "\t")
			if len(fs) == 5 {
				want[fs[0]+"/"+fs[1]] = fs[2:]
			}
		}
		f.Close()
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(bytes.NewReader(data), f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		var buf bytes.Buffer
		if err := Encode(&buf, m); err != nil || !bytes.Equal(buf.Bytes(), data) {
			t.Errorf("%s: round trip differs (%v)", f, err)
		}
		variant := filepath.Base(filepath.Dir(f))
		for _, op := range m.Operators {
			w, ok := want[variant+"/"+op.ID.String()]
			if !ok {
				t.Errorf("%s: operator %s not in sizes.tsv", f, op.ID)
				continue
			}
			got := []string{strconv.Itoa(op.SubtaskStateCount()), strconv.FormatInt(op.CheckpointedSize(), 10), strconv.FormatInt(op.StateSize(), 10)}
			if strings.Join(got, " ") != strings.Join(w, " ") {
				t.Errorf("%s operator %s: count, checkpointed size, state size = %v; Flink says %v", f, op.ID, got, w)
			}
		}
	}
}
