package savepoint

import (
	"errors"
	"fmt"

	"github.com/statecraft/statecraft/statecore/metadata"
)

// Format is how keyed state is stored.
type Format int

const (
	// FormatCanonical is the backend-independent format (the default for savepoints since Flink
	// 1.15, and every heap backend snapshot): key-groups handles over streams statecraft reads.
	FormatCanonical Format = iota
	// FormatNative is a RocksDB/ForSt native snapshot: keyed state is the backend's SST files
	// (incremental handles, tag 11 or 5), read through statecore/rocksdb.
	FormatNative
	// FormatChangelog is a changelog state backend snapshot (tags 8, 9, 10, 13, 14).
	FormatChangelog
)

func (f Format) String() string {
	switch f {
	case FormatCanonical:
		return "canonical"
	case FormatNative:
		return "native"
	case FormatChangelog:
		return "changelog"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ErrNotCanonical is wrapped by the error CheckCanonical returns.
var ErrNotCanonical = errors.New("not a canonical savepoint")

// DetectFormat looks at the keyed handles of every operator: any incremental handle makes the
// snapshot native, any changelog handle a changelog snapshot; otherwise it is canonical. It also
// returns the first operator with a non-canonical handle.
func DetectFormat(m *metadata.Metadata) (Format, *metadata.OperatorState) {
	for _, op := range m.Operators {
		for _, st := range op.Subtasks {
			for _, h := range []metadata.KeyedHandle{st.ManagedKeyed, st.RawKeyed} {
				switch h.(type) {
				case *metadata.IncrementalHandle:
					return FormatNative, op
				case *metadata.ChangelogHandle, *metadata.ChangelogBytesHandle, *metadata.ChangelogFileHandle:
					return FormatChangelog, op
				}
			}
		}
	}
	return FormatCanonical, nil
}

// CheckReadable returns nil when statecraft reads the keyed state: canonical savepoints, and
// native RocksDB snapshots (statecore/rocksdb). Otherwise it is CheckCanonical's error.
func (s *Savepoint) CheckReadable() error {
	if s.Format() == FormatNative {
		return nil
	}
	return s.CheckCanonical()
}

// Format is DetectFormat of the savepoint's metadata.
func (s *Savepoint) Format() Format {
	f, _ := DetectFormat(s.Metadata)
	return f
}

// CheckCanonical returns nil for a canonical savepoint and otherwise an error (wrapping
// ErrNotCanonical) that says why statecraft cannot read the keyed state and how to take a
// savepoint it can read.
func (s *Savepoint) CheckCanonical() error {
	f, op := DetectFormat(s.Metadata)
	if f == FormatCanonical {
		return nil
	}
	who := "operator " + op.ID.String()
	if op.UID != "" {
		who = fmt.Sprintf("operator %q (%s)", op.UID, op.ID)
	}
	switch f {
	case FormatNative:
		return fmt.Errorf("%s: %w: %s has keyed state in RocksDB's native format (SST files), "+
			"which statecraft reads but this step needs in the canonical format. Take a canonical savepoint of the job instead: "+
			"`flink savepoint --type canonical <jobId> <targetDirectory>` or "+
			"`flink stop --type canonical --savepointPath <targetDirectory> <jobId>` "+
			"(canonical is the default for savepoints; native checkpoints cannot be converted)",
			s.MetadataPath, ErrNotCanonical, who)
	default:
		return fmt.Errorf("%s: %w: %s has keyed state written by the changelog state backend, "+
			"which statecraft cannot read. Take a canonical savepoint of the job instead: "+
			"`flink savepoint --type canonical <jobId> <targetDirectory>`",
			s.MetadataPath, ErrNotCanonical, who)
	}
}
