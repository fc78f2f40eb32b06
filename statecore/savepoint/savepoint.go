// Package savepoint opens a Flink savepoint (or retained checkpoint) directory and resolves the
// stream handles of its _metadata to byte readers, without ever reading outside the directory.
//
// A savepoint directory looks like this:
//
//	savepoint-3a7f21-5c0b8e2d1f4a/
//	  _metadata                       checkpoint metadata (package metadata)
//	  1b9e0c2e-...-7d1f               state files, named by random UUIDs; _metadata refers to
//	  9f31a7c4-...-02aa               them with relative handles (tag 6)
//
// Small streams are not files at all: they are stored inline in _metadata (tag 1).
//
// The directory is a storage.Store: a local directory (every file opened through an os.Root, so
// a handle whose path has "..", or a symbolic link leading out of it, is refused) or a key
// prefix on an object store (s3://bucket/prefix), read with ranged reads. Nothing here knows
// which.
//
// Absolute file handles (tag 2, "file:/old/place/savepoint-x/abc", "s3://bucket/sp/abc") are
// resolved as resolveAbsolute describes: --path-map rewrites first, then a path inside the
// directory, then a file of the same base name in the directory (the savepoint was moved or
// copied, to another disk or bucket; Stream.Moved records it), then, on an object store, the
// key it names on the same store (entropy injection). A local file outside the directory is
// refused unless --path-map names its place.
package savepoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/storage"
)

// MetadataFileName is the name Flink gives the metadata file in a savepoint directory.
const MetadataFileName = "_metadata"

// Savepoint is an opened savepoint or checkpoint directory.
type Savepoint struct {
	// Dir is the directory as given (absolute), or the parent of the given _metadata file; on
	// an object store the canonical URL of the key prefix (s3://bucket/prefix).
	Dir          string
	MetadataPath string // Dir joined with the metadata file's name
	Metadata     *metadata.Metadata
	// Store is the directory or key prefix the savepoint's own files are read from.
	Store storage.Store

	opt       Options
	metaBytes []byte                   // the _metadata file as read by Open
	realDir   string                   // a local Dir with symbolic links resolved, for matching absolute handles
	others    map[string]storage.Store // stores of files outside Dir that --path-map or entropy injection name
}

// Options change how a savepoint is opened.
type Options struct {
	// PathMap rewrites absolute file handles: a handle starting with Old (up to a "/") is read
	// at New plus the rest. The user names the place, so a mapped file may lie outside Dir.
	PathMap []PathMapping
	// MetadataName, when not empty, is the name of the metadata file in the directory given
	// (a migration verifies an object-store output through a temporary name before it writes
	// _metadata).
	MetadataName string
}

// PathMapping is one OLD=NEW rewrite of absolute state-file paths.
type PathMapping struct{ Old, New string }

// ParsePathMap reads an OLD=NEW mapping (the --path-map flag).
func ParsePathMap(s string) (PathMapping, error) {
	old, new, ok := strings.Cut(s, "=")
	if !ok || old == "" || new == "" {
		return PathMapping{}, fmt.Errorf("path map %q: want OLD=NEW (for example s3://old-bucket/sp=/data/sp)", s)
	}
	if _, err := storage.Parse(new); err != nil {
		return PathMapping{}, fmt.Errorf("path map %q: %w", s, err)
	}
	// Flink's S3 spellings name one store: a rule for s3a:// or s3p:// also maps s3://.
	for _, alias := range []string{"s3a://", "s3p://"} {
		if rest, ok := strings.CutPrefix(old, alias); ok {
			old = "s3://" + rest
		}
	}
	return PathMapping{Old: strings.TrimSuffix(old, "/"), New: strings.TrimSuffix(new, "/")}, nil
}

// Open opens the savepoint at p, which is a savepoint directory or its _metadata file, on a
// local disk or an object store (see storage.Parse for the spellings), and decodes the metadata.
// Close releases it.
func Open(p string) (*Savepoint, error) {
	return OpenWith(context.Background(), p, Options{})
}

// OpenWith is Open with options; ctx bounds every read of the savepoint.
func OpenWith(ctx context.Context, p string, opt Options) (*Savepoint, error) {
	loc, err := storage.Parse(p)
	if err != nil {
		return nil, fmt.Errorf("open savepoint: %w", err)
	}
	dir, name := loc, MetadataFileName
	if loc.Kind == storage.Local {
		fi, err := os.Stat(loc.Path)
		if err != nil {
			return nil, fmt.Errorf("open savepoint: %w", err)
		}
		if !fi.IsDir() {
			dir, name = loc.Dir()
		} else if _, err := os.Stat(filepath.Join(loc.Path, name)); err != nil {
			// A job's checkpoint directory: its latest complete chk-N (see checkpoint.go).
			if chk, found, err := LatestCheckpoint(loc.Path); found {
				if err != nil {
					return nil, fmt.Errorf("open savepoint: %w", err)
				}
				if dir, err = storage.Parse(chk); err != nil {
					return nil, fmt.Errorf("open savepoint: %w", err)
				}
			}
		}
	} else if d, base := loc.Dir(); base == MetadataFileName {
		dir = d
	}
	if opt.MetadataName != "" {
		name = opt.MetadataName
	}
	st, err := storage.Open(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("open savepoint: %w", err)
	}
	s := &Savepoint{Dir: st.Location().String(), Store: st, opt: opt}
	s.MetadataPath = st.Location().Join(name).String()
	if dir.Kind == storage.Local {
		s.realDir = s.Dir
		if real, err := filepath.EvalSymlinks(s.Dir); err == nil {
			s.realDir = real
		}
	}
	f, err := st.Open(ctx, name)
	if err != nil {
		st.Close()
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("open savepoint: %s has no %s file (is it a savepoint or checkpoint directory?)", s.Dir, name)
		}
		return nil, fmt.Errorf("open savepoint metadata: %w", err)
	}
	// The bytes are kept: migrations decode the metadata again (ReadMetadata), and on an
	// object store every read is a request.
	s.metaBytes, err = io.ReadAll(io.NewSectionReader(f, 0, f.Size()))
	f.Close()
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("open savepoint: read %s: %w", s.MetadataPath, err)
	}
	m, err := metadata.Decode(bytes.NewReader(s.metaBytes), s.MetadataPath)
	if err != nil {
		st.Close()
		return nil, err
	}
	s.Metadata = m
	if err := s.checkPathMap(); err != nil {
		st.Close()
		return nil, err
	}
	if dir.Kind == storage.Local {
		if pm, ok := checkpointMapping(dir.Path, m); ok {
			s.opt.PathMap = append(append([]PathMapping(nil), s.opt.PathMap...), pm)
		}
	}
	return s, nil
}

// ReadMetadata returns a copy of the bytes of the _metadata file the savepoint was opened from.
func (s *Savepoint) ReadMetadata() ([]byte, error) {
	return bytes.Clone(s.metaBytes), nil
}

// Close releases the directory handle.
func (s *Savepoint) Close() error {
	for _, o := range s.others {
		o.Close()
	}
	return s.Store.Close()
}

// Stream is an opened stream handle: a random-access reader over exactly the stream's bytes.
type Stream struct {
	*io.SectionReader
	// Name says where the bytes come from, for error messages: a file path, or the metadata
	// file and the inline handle's name.
	Name string
	// Moved is true when an absolute file handle was resolved by its base name in the directory.
	Moved bool
	// File is where a file-backed stream's file is (Kind "" for inline bytes): migrations link
	// or copy it by this location.
	File storage.Location
	// ETag is the object store's entity tag of the file ("" on a local disk).
	ETag string

	closer io.Closer
}

// Close closes the underlying file, if any.
func (s *Stream) Close() error {
	if s.closer == nil {
		return nil
	}
	return s.closer.Close()
}

// OpenStream opens the bytes a stream handle points at: inline bytes (tag 1), a file relative to
// the savepoint directory (tag 6), an absolute file inside it (tag 2, see the package comment),
// a segment of such a file (tag 15), or the delegate of a key-groups handle (tag 3).
func (s *Savepoint) OpenStream(h metadata.StreamHandle) (*Stream, error) {
	switch h := h.(type) {
	case nil:
		return nil, errors.New("open stream: null handle (the state is empty)")
	case *metadata.ByteStreamHandle:
		return &Stream{
			SectionReader: io.NewSectionReader(bytes.NewReader(h.Data), 0, int64(len(h.Data))),
			Name:          fmt.Sprintf("%s (inline stream %s)", s.MetadataPath, h.Name),
		}, nil
	case *metadata.RelativeFileHandle:
		return s.openFile(s.Store, h.Path, 0, h.Size, true)
	case *metadata.FileHandle:
		return s.openAbsolute(h.Path, 0, h.Size, true)
	case *metadata.SegmentFileHandle:
		return s.openAbsolute(h.Path, h.StartPos, h.Size, false)
	case *metadata.EmptySegmentFileHandle:
		return &Stream{SectionReader: io.NewSectionReader(bytes.NewReader(nil), 0, 0), Name: "empty segment"}, nil
	case *metadata.KeyGroupsHandle:
		return s.OpenStream(h.Delegate)
	}
	return nil, fmt.Errorf("open stream: unsupported handle %T (tag %d)", h, h.Tag())
}

// openFile opens name (slash-separated, relative to st's root) and returns the section
// [start, start+size). With whole, the file must be exactly size bytes (size < 0: unknown, take
// the whole file).
func (s *Savepoint) openFile(st storage.Store, rel string, start, size int64, whole bool) (*Stream, error) {
	if storage.CheckName(rel) != nil {
		return nil, fmt.Errorf("%s: state file %q is outside the savepoint directory (refused)", s.MetadataPath, rel)
	}
	f, err := st.Open(context.Background(), rel)
	if err != nil {
		return nil, fmt.Errorf("%s: open state file %q: %w", s.MetadataPath, rel, err)
	}
	name := st.Location().Join(rel).String()
	n := f.Size()
	switch {
	case whole && size >= 0 && n != size:
		f.Close()
		return nil, fmt.Errorf("%s: state file is %d bytes, the metadata says %d (truncated or replaced?)", name, n, size)
	case whole:
		size = n
	case start < 0 || size < 0 || start > n || size > n-start:
		f.Close()
		return nil, fmt.Errorf("%s: segment [%d, +%d) does not fit the file's %d bytes", name, start, size, n)
	}
	out := &Stream{SectionReader: io.NewSectionReader(f, start, size), Name: name, File: st.Location().Join(rel), closer: f}
	if e, ok := f.(interface{ ETag() string }); ok {
		out.ETag = e.ETag()
	}
	return out, nil
}

// openAbsolute resolves an absolute path or URI as described in the package comment.
func (s *Savepoint) openAbsolute(p string, start, size int64, whole bool) (*Stream, error) {
	t, err := s.resolveAbsolute(p)
	if err != nil {
		return nil, err
	}
	st, err := s.openFile(t.store, t.name, start, size, whole)
	if err != nil {
		return nil, err
	}
	st.Moved = t.moved
	return st, nil
}

// LocalPath returns where a file-backed stream handle's bytes are, as a slash-separated path
// relative to the savepoint directory, resolved and checked as OpenStream does: tag 6 relative
// paths (which must stay inside), tag 2 absolute paths inside the directory or found by base name
// (moved is then true), tag 15 segments (the segment's file), and key-groups handles (their
// delegate). Inline (tag 1) and empty handles have no file: it returns "" and no error. A file
// outside the directory (reached through --path-map or on another prefix of the store) is
// refused. Tools that copy or link a savepoint's files use it so that they accept exactly the
// files OpenStream reads.
func (s *Savepoint) LocalPath(h metadata.StreamHandle) (rel string, moved bool, err error) {
	switch h := h.(type) {
	case nil, *metadata.ByteStreamHandle, *metadata.EmptySegmentFileHandle:
		return "", false, nil
	case *metadata.RelativeFileHandle:
		if storage.CheckName(h.Path) != nil {
			return "", false, fmt.Errorf("%s: state file %q is outside the savepoint directory (refused)", s.MetadataPath, h.Path)
		}
		rel = h.Path
	case *metadata.FileHandle, *metadata.SegmentFileHandle:
		p := ""
		if fh, ok := h.(*metadata.FileHandle); ok {
			p = fh.Path
		} else {
			p = h.(*metadata.SegmentFileHandle).Path
		}
		t, err := s.resolveAbsolute(p)
		if err != nil {
			return "", false, err
		}
		if t.store != s.Store {
			return "", false, fmt.Errorf("%s: state file %s is outside the savepoint directory %s (at %s); copy it into the directory first", s.MetadataPath, p, s.Dir, t.store.Location().Join(t.name))
		}
		rel, moved = t.name, t.moved
	case *metadata.KeyGroupsHandle:
		return s.LocalPath(h.Delegate)
	default:
		return "", false, fmt.Errorf("%s: unsupported stream handle %T (tag %d)", s.MetadataPath, h, h.Tag())
	}
	// The store refuses symbolic links that lead out of the directory and non-regular files.
	if _, err := s.Store.Stat(context.Background(), rel); err != nil {
		return "", false, fmt.Errorf("%s: state file %q: %w", s.MetadataPath, rel, err)
	}
	return rel, moved, nil
}
