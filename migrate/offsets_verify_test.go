package migrate

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/statecraft/statecraft/internal/s3test"
	"github.com/statecraft/statecraft/statecore/sourcestate"
)

// filesFixture: kafka-savepoint's job stopped with every state chunk in a file
// (kafka-files-savepoint): each reader subtask's splits live in a state file of their own.
const filesFixture = "../testdata/sources/kafka-files"

// encodedSplit is a Kafka split's payload as the connector writes it (for finding it in a file).
func encodedSplit(t *testing.T, topic string, partition int32, start int64) []byte {
	t.Helper()
	b, err := sourcestate.KafkaSplit{Topic: topic, Partition: partition, StartingOffset: start, StoppingOffset: sourcestate.OffsetNone}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// setOffsetIn finds the one encoded split in b and makes its starting offset to.
func setOffsetIn(t *testing.T, b []byte, topic string, partition int32, from, to int64) []byte {
	t.Helper()
	enc := encodedSplit(t, topic, partition, from)
	i := bytes.Index(b, enc)
	if i < 0 || bytes.Index(b[i+1:], enc) >= 0 {
		t.Fatalf("split %s-%d at %d is not in the bytes exactly once", topic, partition, from)
	}
	// payload: u16 topic length, topic, i32 partition, i64 starting offset, i64 stopping offset
	out := bytes.Clone(b)
	binary.BigEndian.PutUint64(out[i+2+len(topic)+4:], uint64(to))
	return out
}

func treeSums(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][32]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = sha256.Sum256(b)
	}
	return m
}

// TestOffsetsVerifyTamper: verification re-decodes the output on its own, so one offset changed
// in what the step wrote (a changed split, a split no change names, the enumerator's record, a
// rewritten state file) fails the run with that split named, and nothing appears at DST.
func TestOffsetsVerifyTamper(t *testing.T) {
	tests := []struct {
		name    string
		fixture string
		changes []string
		tamper  func(t *testing.T, stage string)
		err     string
	}{
		{"changed split", kafkaFixture, []string{"rename-topic orders=orders-mm", "shift orders:1=-2"},
			func(t *testing.T, stage string) { patchFile(t, stage, "_metadata", "orders-mm", 1, 1, 2) },
			"subtask 0 split orders-mm-1 (start 2, stop none), promised orders-mm-1 (start 1, stop none)"},
		{"split no change names", kafkaFixture, []string{"rename-topic orders=orders-mm", "shift orders:1=-2"},
			func(t *testing.T, stage string) { patchFile(t, stage, "_metadata", "payments", 0, 5, 6) },
			"subtask 1 split payments-0 (start 5, stop none): no change names it, but its bytes differ"},
		{"enumerator", kafkaFixture, []string{"rename-topic orders=orders-mm", "shift orders:1=-2"},
			func(t *testing.T, stage string) {
				patchFile(t, stage, "_metadata", "orders-mm", 0, sourcestate.OffsetEarliest, sourcestate.OffsetCommitted)
			},
			"enumerator state holds orders-mm-0 (start committed, stop none) assigned subtask -1, promised orders-mm-0 (start earliest"},
		{"rewritten state file", filesFixture, []string{"set payments:1=4"},
			func(t *testing.T, stage string) {
				ents, _ := os.ReadDir(stage)
				for _, e := range ents {
					var st syscall.Stat_t
					if e.Name() != "_metadata" && syscall.Stat(filepath.Join(stage, e.Name()), &st) == nil && st.Nlink == 1 {
						patchFile(t, stage, e.Name(), "payments", 1, 4, 3) // the file the step wrote, not a link to the fixture's
						return
					}
				}
				t.Fatal("no state file written by the step")
			},
			"subtask 0 split payments-1 (start 3, stop none), promised payments-1 (start 4, stop none)"},
	}
	op, _ := ParseSelector("uid:kafka-source")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := treeSums(t, tc.fixture)
			parent := t.TempDir()
			dst := filepath.Join(parent, "out")
			// the untampered run passes
			if _, err := Run(tc.fixture, dst, []Step{&Offsets{Operator: op, Changes: changes(t, tc.changes...)}}, Options{}); err != nil {
				t.Fatalf("untampered: %v", err)
			}
			os.RemoveAll(dst)
			testHookBeforeVerify = func(stage string) { tc.tamper(t, stage) }
			defer func() { testHookBeforeVerify = nil }()
			_, err := Run(tc.fixture, dst, []Step{&Offsets{Operator: op, Changes: changes(t, tc.changes...)}}, Options{})
			if err == nil || !strings.Contains(err.Error(), "verify:") || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v\nwant a verification error with %q", err, tc.err)
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 0 {
				t.Errorf("a failed verification left %v", ents)
			}
			if after := treeSums(t, tc.fixture); len(after) != len(before) || func() bool {
				for k, v := range before {
					if after[k] != v {
						return true
					}
				}
				return false
			}() {
				t.Fatalf("the fixture %s changed", tc.fixture)
			}
		})
	}
}

func patchFile(t *testing.T, dir, name, topic string, partition int32, from, to int64) {
	t.Helper()
	p := filepath.Join(dir, name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, setOffsetIn(t, b, topic, partition, from, to), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOffsetsCarriesFiles: on a savepoint whose splits live in state files, a change of one
// subtask's partitions writes that subtask's file anew and hard-links the other's from the
// source, untouched (TestOffsetsOracle has Flink restore the same edit).
func TestOffsetsCarriesFiles(t *testing.T) {
	// the fixture's splits are where Flink's job stood (its expect.json: next offset per partition)
	var expect struct {
		Read []struct {
			Topic      string
			Partition  int
			NextOffset int64
		}
	}
	b, err := os.ReadFile(filesFixture + ".expect.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &expect); err != nil {
		t.Fatal(err)
	}
	var read []string
	for _, r := range expect.Read {
		read = append(read, fmt.Sprintf("%s:%d=%d", r.Topic, r.Partition, r.NextOffset))
	}
	sort.Strings(read)
	if r, _ := positions(t, filesFixture); fmt.Sprint(r) != fmt.Sprint(read) {
		t.Fatalf("fixture splits %v, the job read up to %v", r, read)
	}
	dst := filepath.Join(t.TempDir(), "out")
	op, _ := ParseSelector("uid:kafka-source")
	rep, err := Run(filesFixture, dst, []Step{&Offsets{Operator: op, Changes: changes(t, "set orders:1=latest", "set payments:1=4")}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, e := positions(t, dst)
	if fmt.Sprint(r) != "[orders:0=2 orders:1=latest orders:2=4 payments:0=5 payments:1=4]" ||
		fmt.Sprint(e) != "[orders-0 assigned earliest orders-1 assigned latest orders-2 assigned earliest payments-0 assigned earliest payments-1 assigned 4]" {
		t.Fatalf("readers %v\nenum %v", r, e)
	}
	inode := func(p string) uint64 {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		return st.Ino
	}
	src := map[uint64]string{}
	ents, _ := os.ReadDir(filesFixture)
	for _, e := range ents {
		if e.Name() != "_metadata" {
			src[inode(filepath.Join(filesFixture, e.Name()))] = e.Name()
		}
	}
	if len(src) != 2 {
		t.Fatalf("the fixture has %d state files, want one per reader subtask", len(src))
	}
	linked, fresh := 0, 0
	ents, _ = os.ReadDir(dst)
	for _, e := range ents {
		if e.Name() == "_metadata" {
			continue
		}
		if name, ok := src[inode(filepath.Join(dst, e.Name()))]; ok && name == e.Name() {
			linked++
		} else {
			fresh++
		}
	}
	if linked != 1 || fresh != 1 {
		t.Fatalf("%d files linked from the source and %d written, want 1 and 1 (subtask 1's splits did not change)", linked, fresh)
	}
	kinds := map[string]bool{}
	for _, v := range rep.Verify {
		kinds[v.Kind] = true
		if v.Proof != "" && v.Expected != v.Actual {
			t.Errorf("row %+v: expected and actual differ in a passed verification", v)
		}
	}
	if !kinds["splits"] || !kinds["coordinator"] {
		t.Errorf("verify rows %+v lack the decoded splits and enumerator checks", rep.Verify)
	}
}

// corrupt copies a fixture into a new directory with its _metadata passed through fix.
func corrupt(t *testing.T, fixture string, fix func(t *testing.T, b []byte) []byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sp")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(fixture)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(fixture, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "_metadata" {
			b = fix(t, b)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// splitAt is where split topic-partition (starting at start) lies in a fixture's _metadata: the
// index of its payload, which SimpleVersionedSerialization frames as i32 version, i32 length.
func splitAt(t *testing.T, b []byte, topic string, partition int32, start int64) int {
	t.Helper()
	enc := encodedSplit(t, topic, partition, start)
	i := bytes.Index(b, enc)
	if i < 8 || bytes.Index(b[i+1:], enc) >= 0 {
		t.Fatalf("split %s-%d is not in _metadata exactly once", topic, partition)
	}
	return i
}

// TestOffsetsBadInput: damaged source state and changes that cannot hold are one error each,
// naming what is wrong, and nothing is written: no DST, no staging directory beside it.
func TestOffsetsBadInput(t *testing.T) {
	dir := t.TempDir()
	csvFile := filepath.Join(dir, "below.csv")
	os.WriteFile(csvFile, []byte("topic,partition,offset\norders,0,-5\n"), 0o644)
	dupFile := filepath.Join(dir, "dup.json")
	os.WriteFile(dupFile, []byte(`[{"topic":"orders","partition":1,"offset":0}]`), 0o644)
	tests := []struct {
		name     string
		fix      func(t *testing.T, b []byte) []byte
		changes  []string
		fromFile string
		err      string
	}{
		{"unknown split serializer version", func(t *testing.T, b []byte) []byte {
			i := splitAt(t, b, "payments", 1, 6)
			binary.BigEndian.PutUint32(b[i-8:], 7)
			return b
		}, []string{"set orders:0=1"}, "", "subtask 0 SourceReaderState[0]: KafkaPartitionSplit serializer version 7 is not known"},
		{"truncated split", func(t *testing.T, b []byte) []byte {
			i := splitAt(t, b, "payments", 1, 6)
			binary.BigEndian.PutUint32(b[i-4:], binary.BigEndian.Uint32(b[i-4:])+1)
			return b
		}, []string{"set orders:0=1"}, "", "SourceReaderState[0]: offset 4: payload length: frame says 31 bytes, the element has 30"},
		{"enumerator state longer than its frame", func(t *testing.T, b []byte) []byte {
			// the coordinator: i32 serde version 1, i32 enumerator version 3, i32 length, then the state
			i := bytes.Index(b, []byte{0, 0, 0, 1, 0, 0, 0, 3})
			if i < 0 {
				t.Fatal("no coordinator state framing in _metadata")
			}
			binary.BigEndian.PutUint32(b[i+8:], binary.BigEndian.Uint32(b[i+8:])+1)
			return b
		}, []string{"set orders:0=1"}, "", "coordinator state: offset 12: enumerator checkpoint: want 194 bytes, file has 193"},
		{"starting offset below -3 in the savepoint", func(t *testing.T, b []byte) []byte {
			return setOffsetIn(t, b, "orders", 2, 4, -5)
		}, []string{"set orders:0=1"}, "", "subtask 1 SourceReaderState[1]: offset 12: startingOffset: want an offset >= 0 or a marker (-1 latest, -2 earliest, -3 committed"},
		{"offset below -3 in a file", nil, nil, csvFile, "CSV line 2: --set \"orders:0=-5\": want an offset >= 0"},
		{"shift below 0", nil, []string{"shift payments=-6"}, "", "payments-0 would start at 5+(-6), outside 0.."},
		{"two changes for one partition", nil, []string{"shift orders=+1"}, dupFile, "both change partition orders-1"},
		{"a partition the savepoint does not hold", nil, []string{"set payments:2=1"}, "",
			`the savepoint holds no partition 2 of "payments" (it holds orders (partitions 0,1,2), payments (partitions 0,1))`},
		{"a topic the savepoint does not hold", nil, []string{"drop-topic clicks"}, "",
			`the savepoint holds no topic "clicks" (it holds orders (partitions 0,1,2), payments (partitions 0,1))`},
	}
	op, _ := ParseSelector("uid:kafka-source")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := kafkaFixture
			if tc.fix != nil {
				src = corrupt(t, kafkaFixture, tc.fix)
			}
			parent := t.TempDir()
			dst := filepath.Join(parent, "out")
			_, err := Run(src, dst, []Step{&Offsets{Operator: op, Changes: changes(t, tc.changes...), FromFile: tc.fromFile}}, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v\nwant %q", err, tc.err)
			}
			t.Logf("%s: %v", tc.name, err)
			if ents, _ := os.ReadDir(parent); len(ents) != 0 {
				t.Errorf("a refused run left %v", ents)
			}
		})
	}
}

// TestOffsetsS3: the same edit of the state-file fixture from S3 to S3 (a real S3 server): the
// subtask whose splits change gets a new object, the other's state file is copied server-side,
// and the output, verified by decoding it from the server, holds the promised positions.
func TestOffsetsS3(t *testing.T) {
	srv := s3test.Require(t)
	bucket := srv.Bucket(t, "offsets")
	copyStore(t, filesFixture, "s3://"+bucket+"/src")
	dst := "s3://" + bucket + "/out"
	op, _ := ParseSelector("uid:kafka-source")
	rep, err := Run("s3://"+bucket+"/src", dst, []Step{&Offsets{Operator: op, Changes: changes(t, "set orders:1=latest", "set payments:1=4")}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Written != 1 || rep.Linked != 1 || rep.Copied != 0 {
		t.Errorf("%d objects written, %d copied server-side, %d through statecraft; want 1, 1, 0", rep.Written, rep.Linked, rep.Copied)
	}
	local := filepath.Join(t.TempDir(), "out")
	copyStore(t, dst, local)
	if r, e := positions(t, local); fmt.Sprint(r) != "[orders:0=2 orders:1=latest orders:2=4 payments:0=5 payments:1=4]" || len(e) != 5 {
		t.Fatalf("readers %v enum %v", r, e)
	}
}
