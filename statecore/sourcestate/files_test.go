package sourcestate

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/uid"
)

const fileFixture = "../../testdata/sources/file-source"

// fileExpect is file-source.expect.json: the state as flink-connector-files' own serializers
// decoded it (reader splits through the State Processor API, the enumerator from _metadata).
type fileExpect struct {
	OperatorUID string            `json:"operatorUid"`
	Splits      []fileExpectSplit `json:"splits"`
	Enumerator  struct {
		CoordinatorSerdeVersion int32             `json:"coordinatorSerdeVersion"`
		SerializerVersion       int32             `json:"serializerVersion"`
		PendingSplits           []fileExpectSplit `json:"pendingSplits"`
		AlreadyProcessedPaths   []string          `json:"alreadyProcessedPaths"`
	} `json:"enumerator"`
}

type fileExpectSplit struct {
	ID                   string   `json:"id"`
	Path                 string   `json:"path"`
	Offset               int64    `json:"offset"`
	Length               int64    `json:"length"`
	FileModificationTime int64    `json:"fileModificationTime"`
	FileSize             int64    `json:"fileSize"`
	Hostnames            []string `json:"hostnames"`
	ReaderPosition       *struct {
		Offset             int64 `json:"offset"`
		RecordsAfterOffset int64 `json:"recordsAfterOffset"`
	} `json:"readerPosition"`
}

func (s fileExpectSplit) String() string {
	pos := "none"
	if p := s.ReaderPosition; p != nil {
		pos = fmt.Sprintf("%d+%d", p.Offset, p.RecordsAfterOffset)
	}
	return fmt.Sprintf("%s %s %d+%d mtime=%d size=%d hosts=%v pos=%s", s.ID, s.Path, s.Offset, s.Length, s.FileModificationTime, s.FileSize, s.Hostnames, pos)
}

func fileSplitString(f FileSplit) string {
	e := fileExpectSplit{ID: f.ID, Path: f.Path, Offset: f.Offset, Length: f.Length, FileModificationTime: f.ModificationTime, FileSize: f.FileSize, Hostnames: f.Hostnames}
	if e.Hostnames == nil {
		e.Hostnames = []string{}
	}
	if p := f.Position; p != nil {
		e.ReaderPosition = &struct {
			Offset             int64 `json:"offset"`
			RecordsAfterOffset int64 `json:"recordsAfterOffset"`
		}{p.Offset, p.RecordsAfterOffset}
	}
	return e.String()
}

// TestFileSourceFixture: a FileSource savepoint Flink 2.3.0 took part way through a file decodes
// to what the connector's serializers read: the reader's split with its position, the
// enumerator's pending splits and already processed paths.
func TestFileSourceFixture(t *testing.T) {
	var exp fileExpect
	sp := openFixture(t, fileFixture, &exp)
	var src *Source
	var err error
	for _, op := range sp.Metadata.Operators {
		if op.ID.String() == uid.Hash(exp.OperatorUID) {
			if src, err = Read(sp, op); err != nil {
				t.Fatal(err)
			}
		}
	}
	if src == nil || src.Connector != ConnectorFiles {
		t.Fatalf("source %+v, want connector files", src)
	}
	var got, want []string
	for _, s := range src.Splits {
		got = append(got, fileSplitString(*s.File))
	}
	for _, s := range exp.Splits {
		want = append(want, s.String())
	}
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("reader splits\n got %v\nwant %v", got, want)
	}
	if len(exp.Splits) == 0 || exp.Splits[0].ReaderPosition == nil {
		t.Errorf("the fixture's reader holds no split with a position: %v", want)
	}
	if src.Coordinator.SerdeVersion != exp.Enumerator.CoordinatorSerdeVersion || src.Coordinator.Enum.Version != exp.Enumerator.SerializerVersion {
		t.Errorf("coordinator serde %d enumerator version %d, want %+v", src.Coordinator.SerdeVersion, src.Coordinator.Enum.Version, exp.Enumerator)
	}
	got, want = nil, nil
	for _, s := range src.FileEnum.Pending {
		got = append(got, fileSplitString(s))
	}
	for _, s := range exp.Enumerator.PendingSplits {
		want = append(want, s.String())
	}
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(want) == 0 {
		t.Errorf("pending splits\n got %v\nwant %v", got, want)
	}
	paths := append([]string(nil), src.FileEnum.ProcessedPaths...)
	sort.Strings(paths)
	if fmt.Sprint(paths) != fmt.Sprint(exp.Enumerator.AlreadyProcessedPaths) || len(paths) == 0 {
		t.Errorf("processed paths %v, want %v", paths, exp.Enumerator.AlreadyProcessedPaths)
	}
}

// TestFileSourceBadState: damaged FileSource state (derived from the fixture's) is one error
// naming the field; a Kafka source is never taken for a FileSource.
func TestFileSourceBadState(t *testing.T) {
	sp, err := savepoint.Open(fileFixture)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	var src *Source
	for _, op := range sp.Metadata.Operators {
		if IsSource(op) {
			if src, err = Read(sp, op); err != nil {
				t.Fatal(err)
			}
		}
	}
	split, enum := src.Splits[0].Raw.Payload, src.Coordinator.Enum.Payload
	cp := func(b []byte, f func([]byte) []byte) []byte { return f(append([]byte(nil), b...)) }
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"split truncated", e2(DecodeFileSplit(1, split[:len(split)-4], "s")), "s"},
		{"split trailing", e2(DecodeFileSplit(1, append(append([]byte(nil), split...), 7), "s")), "bytes after the reader position"},
		{"split version", e2(DecodeFileSplit(2, split, "s")), "FileSourceSplit"},
		{"enum magic", e3(DecodeFileEnum(1, cp(enum, func(b []byte) []byte { b[0] ^= 1; return b }), "e")), "magic"},
		{"enum count", e3(DecodeFileEnum(1, cp(enum, func(b []byte) []byte { b[11] = 0x7f; return b }), "e")), "splitCount"},
		{"enum truncated", e3(DecodeFileEnum(1, enum[:len(enum)-1], "e")), "path["},
		{"enum trailing", e3(DecodeFileEnum(1, append(append([]byte(nil), enum...), 0), "e")), "after the last path"},
		{"enum version", e3(DecodeFileEnum(0, enum, "e")), "PendingSplitsCheckpoint"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, c.err, c.want)
		}
	}
	// the Kafka fixture stays Kafka's
	k, _ := readKafkaFixture(t, "../../testdata/sources/kafka-datastream")
	if k.Connector != ConnectorKafka || k.FileEnum != nil {
		t.Errorf("kafka source read as %s", k.Connector)
	}
}

func e2(_ FileSplit, err error) error      { return err }
func e3(_ *FileEnumState, err error) error { return err }
