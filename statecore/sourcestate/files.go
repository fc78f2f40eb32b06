package sourcestate

import (
	"encoding/binary"
	"fmt"
	"net/url"

	"github.com/statecraft/statecraft/statecore/javaio"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// FileSource (flink-connector-files) state, read only.
//
// # FileSourceSplit, serializer version 1 (the only one)
//
//	+-----------+------+-----------+-----------+--------------------+-------------+
//	| UTF id    | Path | i64 offset| i64 length| i64 modification   | i64 file    |
//	|           |      |           |           | time (ms)          | size        |
//	+-----------+------+-----------+-----------+--------------------+-------------+
//	| i32 n | n x UTF hostname | bool position | [i64 offset | i64 recordsAfterOffset] |
//	+-------+------------------+---------------+-------------------------------------+
//
// Path (Path.serializeToDataOutputView): bool present, then the URI's parts, each a nullable
// string (bool not-null + StringValue string: varint length+1, then each char a varint) except
// the port: scheme, userInfo, host, i32 port, path, query, fragment.
//
// The reader position (CheckpointedPosition) says where the reader resumes in the split: an
// offset into the file (-1: none, the format cannot seek) and how many records after it to skip.
//
// # PendingSplitsCheckpoint, serializer version 1 (enumerator state)
//
// Unlike everything else in Flink's state, its ints are LITTLE-endian (a ByteBuffer set to
// LITTLE_ENDIAN in PendingSplitsCheckpointSerializer):
//
//	+----------------+---------------+-----------+----------+---------------------------------+
//	| i32 0xDEADBEEF | i32 split ser.| i32 nSplit| i32 nPath| nSplit x { i32 len | split }    |
//	| (magic)        | version       |           |          | nPath x { i32 len | UTF-8 path }|
//	+----------------+---------------+-----------+----------+---------------------------------+
//
// The splits are those not handed to a reader yet; the paths are the files the continuous
// enumerator has already turned into splits (a bounded one records none).

// ConnectorFiles names the FileSource in listings.
const ConnectorFiles = "files"

// FileSplitVersion is the only FileSourceSplitSerializer version.
const FileSplitVersion = 1

// FileEnumVersion is the only PendingSplitsCheckpointSerializer version.
const FileEnumVersion = 1

// fileEnumMagic is PendingSplitsCheckpointSerializer's VERSION_1_MAGIC_NUMBER.
const fileEnumMagic = 0xDEADBEEF

// FileSplit is a FileSourceSplit: a region of one file and where the reader stands in it.
type FileSplit struct {
	ID               string
	Path             string // the URI as Flink's Path prints it
	Offset, Length   int64
	ModificationTime int64
	FileSize         int64
	Hostnames        []string
	// Position is nil when the reader has not checkpointed a position in the split.
	Position *FilePosition
}

// FilePosition is a CheckpointedPosition.
type FilePosition struct {
	Offset             int64 // -1: none (the format reads from the split's start and skips records)
	RecordsAfterOffset int64
}

// FileEnumState is a PendingSplitsCheckpoint.
type FileEnumState struct {
	SplitVersion   int32
	Pending        []FileSplit
	ProcessedPaths []string
}

// maxFileField bounds counts and lengths in file-source state (a hostile count must not allocate).
const maxFileField = 1 << 24

// DecodeFileSplit decodes a FileSourceSplit payload written with serializer version.
func DecodeFileSplit(version int32, b []byte, name string) (FileSplit, error) {
	if version != FileSplitVersion {
		return FileSplit{}, &UnknownVersionError{Name: name, What: "FileSourceSplit", Version: version, Known: "1"}
	}
	r := javaio.NewBytesReader(b, name, 0)
	s := readFileSplit(r, b)
	if r.Err() == nil && !r.AtEOF() {
		r.Failf("end of split", "%d bytes after the reader position", len(b)-int(r.Offset()))
	}
	if err := r.Err(); err != nil {
		return FileSplit{}, err
	}
	return s, nil
}

func readFileSplit(r *javaio.Reader, b []byte) FileSplit {
	var s FileSplit
	s.ID = r.UTF("id")
	s.Path = readFlinkPath(r, b)
	s.Offset = r.I64("offset")
	s.Length = r.I64("length")
	s.ModificationTime = r.I64("fileModificationTime")
	s.FileSize = r.I64("fileSize")
	n := r.Count("hostnames", maxFileField)
	for i := 0; i < n && r.Err() == nil; i++ {
		s.Hostnames = append(s.Hostnames, r.UTF(fmt.Sprintf("hostnames[%d]", i)))
	}
	if r.Bool("readerPosition.present") && r.Err() == nil {
		s.Position = &FilePosition{Offset: r.I64("readerPosition.offset"), RecordsAfterOffset: r.I64("readerPosition.recordsAfterOffset")}
	}
	return s
}

// readFlinkPath reads Path.serializeToDataOutputView and gives the URI back as text.
func readFlinkPath(r *javaio.Reader, b []byte) string {
	if !r.Bool("path.present") || r.Err() != nil {
		return ""
	}
	part := func(field string) (string, bool) {
		if !r.Bool(field+".notNull") || r.Err() != nil {
			return "", false
		}
		off := r.Offset()
		in := serializer.NewInput(b[off:])
		v, null := in.String(field)
		if err := in.Err(); err != nil || null {
			r.FailAt(off, field, "want a StringValue string: %v", in.Err())
			return "", false
		}
		r.Skip(field, int64(in.Pos))
		return v, true
	}
	u := url.URL{}
	u.Scheme, _ = part("path.scheme")
	if ui, ok := part("path.userInfo"); ok {
		u.User = url.User(ui)
	}
	host, _ := part("path.host")
	port := r.I32("path.port")
	u.Host = host
	if port >= 0 && r.Err() == nil {
		u.Host = fmt.Sprintf("%s:%d", host, port)
	}
	u.Path, _ = part("path.path")
	u.RawQuery, _ = part("path.query")
	u.Fragment, _ = part("path.fragment")
	if u.Scheme == "file" && u.Host == "" {
		return "file:" + u.Path // what Flink's Path.toString prints for a local file
	}
	return u.String()
}

// DecodeFileEnum decodes a PendingSplitsCheckpoint written with serializer version.
func DecodeFileEnum(version int32, b []byte, name string) (*FileEnumState, error) {
	if version != FileEnumVersion {
		return nil, &UnknownVersionError{Name: name, What: "PendingSplitsCheckpoint", Version: version, Known: "1"}
	}
	// little-endian ints: swap them into a big-endian reader's view one at a time
	r := javaio.NewBytesReader(b, name, 0)
	le := func(field string) int32 {
		v := r.Bytes(field, 4)
		if r.Err() != nil {
			return 0
		}
		return int32(binary.LittleEndian.Uint32(v))
	}
	count := func(field string) int {
		off := r.Offset()
		n := le(field)
		if r.Err() == nil && (n < 0 || n > maxFileField) {
			r.FailAt(off, field, "count %d out of range", n)
		}
		return int(n)
	}
	if m := le("magic"); r.Err() == nil && uint32(m) != fileEnumMagic {
		r.FailAt(0, "magic", "0x%08X, want 0x%08X (PendingSplitsCheckpoint)", uint32(m), uint32(fileEnumMagic))
	}
	e := &FileEnumState{SplitVersion: le("splitSerializerVersion")}
	nSplits := count("splitCount")
	nPaths := count("pathCount")
	for i := 0; i < nSplits && r.Err() == nil; i++ {
		field := fmt.Sprintf("split[%d]", i)
		off := r.Offset()
		n := count(field + ".length")
		body := r.Bytes(field, n)
		if r.Err() != nil {
			break
		}
		s, err := DecodeFileSplit(e.SplitVersion, body, fmt.Sprintf("%s %s (at byte %d)", name, field, off+4))
		if err != nil {
			return nil, err
		}
		e.Pending = append(e.Pending, s)
	}
	for i := 0; i < nPaths && r.Err() == nil; i++ {
		field := fmt.Sprintf("path[%d]", i)
		n := count(field + ".length")
		p := r.Bytes(field, n)
		if r.Err() == nil {
			e.ProcessedPaths = append(e.ProcessedPaths, string(p))
		}
	}
	if r.Err() == nil && !r.AtEOF() {
		r.Failf("end of enumerator state", "%d bytes after the last path", len(b)-int(r.Offset()))
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return e, nil
}
