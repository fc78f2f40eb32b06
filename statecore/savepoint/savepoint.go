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
// Every file is opened through an os.Root on the directory, so a handle whose path has "..", an
// absolute path outside the directory, or a symbolic link leading out of it is refused.
//
// Absolute file handles (tag 2, "file:/old/place/savepoint-x/abc") are resolved like this:
//   - a path inside the directory (as given to Open, or its real path) is opened there;
//   - otherwise, when the directory holds a file with the same base name, that file is used:
//     the savepoint was moved or copied, and Flink names state files by random UUIDs, so the base
//     name identifies the file. Stream.Moved records that this happened;
//   - otherwise the handle is refused: the file lives outside the savepoint (an incremental
//     checkpoint's shared directory, another job's savepoint) and must be given explicitly.
//
// Non-local schemes (s3://, hdfs://, ...) are refused with a message naming the scheme.
package savepoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/statecraft/statecraft/statecore/metadata"
)

// MetadataFileName is the name Flink gives the metadata file in a savepoint directory.
const MetadataFileName = "_metadata"

// Savepoint is an opened savepoint or checkpoint directory.
type Savepoint struct {
	Dir          string // the directory as given (or the parent of the given _metadata file)
	MetadataPath string // Dir joined with the metadata file's name
	Metadata     *metadata.Metadata

	root    *os.Root
	realDir string // Dir with symbolic links resolved, for matching absolute handles
}

// Open opens the savepoint at path, which is a savepoint directory or its _metadata file, and
// decodes the metadata. Close releases the directory.
func Open(p string) (*Savepoint, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("open savepoint: %w", err)
	}
	dir, name := p, MetadataFileName
	if !fi.IsDir() {
		dir, name = filepath.Dir(p), filepath.Base(p)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open savepoint directory: %w", err)
	}
	s := &Savepoint{Dir: dir, MetadataPath: filepath.Join(dir, name), root: root}
	if abs, err := filepath.Abs(dir); err == nil {
		s.Dir = abs
		s.MetadataPath = filepath.Join(abs, name)
		s.realDir = abs
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			s.realDir = real
		}
	}
	// A named pipe or device in place of _metadata would block or read forever: refuse it
	// before opening.
	if fi, err := root.Stat(name); err == nil && !fi.Mode().IsRegular() {
		root.Close()
		return nil, fmt.Errorf("open savepoint: %s is not a regular file (%v)", filepath.Join(dir, name), fi.Mode().Type())
	}
	f, err := root.Open(name)
	if err != nil {
		root.Close()
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("open savepoint: %s has no %s file (is it a savepoint or checkpoint directory?)", dir, name)
		}
		return nil, fmt.Errorf("open savepoint metadata: %w", err)
	}
	defer f.Close()
	m, err := metadata.Decode(f, s.MetadataPath)
	if err != nil {
		root.Close()
		return nil, err
	}
	s.Metadata = m
	return s, nil
}

// Close releases the directory handle.
func (s *Savepoint) Close() error { return s.root.Close() }

// Stream is an opened stream handle: a random-access reader over exactly the stream's bytes.
type Stream struct {
	*io.SectionReader
	// Name says where the bytes come from, for error messages: a file path, or the metadata
	// file and the inline handle's name.
	Name string
	// Moved is true when an absolute file handle was resolved by its base name in the directory.
	Moved bool

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
		return s.openFile(h.Path, 0, h.Size, true)
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

// openFile opens rel (slash-separated, relative to the directory) through the root and returns
// the section [start, start+size). With whole, the file must be exactly size bytes (size < 0:
// unknown, take the whole file).
func (s *Savepoint) openFile(rel string, start, size int64, whole bool) (*Stream, error) {
	local := filepath.FromSlash(rel)
	if !filepath.IsLocal(local) {
		return nil, fmt.Errorf("%s: state file %q is outside the savepoint directory (refused)", s.MetadataPath, rel)
	}
	// Stat first: opening a named pipe (or a device) would block or read forever, so anything
	// but a regular file is refused before it is opened. The check after opening stays for a
	// file swapped in between.
	if fi, err := s.root.Stat(local); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: state file %q is not a regular file (%v)", s.MetadataPath, rel, fi.Mode().Type())
	}
	f, err := s.root.Open(local)
	if err != nil {
		return nil, fmt.Errorf("%s: open state file %q: %w", s.MetadataPath, rel, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: stat state file %q: %w", s.MetadataPath, rel, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: state file %q is not a regular file", s.MetadataPath, rel)
	}
	name := filepath.Join(s.Dir, local)
	n := fi.Size()
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
	return &Stream{SectionReader: io.NewSectionReader(f, start, size), Name: name, closer: f}, nil
}

// openAbsolute resolves an absolute path or URI as described in the package comment.
func (s *Savepoint) openAbsolute(p string, start, size int64, whole bool) (*Stream, error) {
	rel, moved, err := s.resolveAbsolute(p)
	if err != nil {
		return nil, err
	}
	st, err := s.openFile(rel, start, size, whole)
	if err != nil {
		return nil, err
	}
	st.Moved = moved
	return st, nil
}

// resolveAbsolute maps an absolute path or URI to a slash-separated path inside the directory:
// the path itself when it is inside, else the base name when a regular file of that name is in
// the directory (moved is then true).
func (s *Savepoint) resolveAbsolute(p string) (rel string, moved bool, err error) {
	fsPath, err := localPath(p)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", s.MetadataPath, err)
	}
	for _, dir := range []string{s.Dir, s.realDir} {
		if dir == "" {
			continue
		}
		if r, err := filepath.Rel(dir, fsPath); err == nil && filepath.IsLocal(r) {
			return filepath.ToSlash(r), false, nil
		}
	}
	base := path.Base(filepath.ToSlash(fsPath))
	if base != "" && base != "." && base != "/" && base != MetadataFileName {
		if fi, err := s.root.Stat(base); err == nil && fi.Mode().IsRegular() {
			return base, true, nil
		}
	}
	return "", false, fmt.Errorf("%s: state file %s is outside the savepoint directory %s and no file named %q is in it (refused)", s.MetadataPath, p, s.Dir, base)
}

// LocalPath returns where a file-backed stream handle's bytes are, as a slash-separated path
// relative to the savepoint directory, resolved and checked as OpenStream does: tag 6 relative
// paths (which must stay inside), tag 2 absolute paths inside the directory or found by base name
// (moved is then true), tag 15 segments (the segment's file), and key-groups handles (their
// delegate). Inline (tag 1) and empty handles have no file: it returns "" and no error. Tools that
// copy or link a savepoint's files use it so that they accept exactly the files OpenStream reads.
func (s *Savepoint) LocalPath(h metadata.StreamHandle) (rel string, moved bool, err error) {
	switch h := h.(type) {
	case nil, *metadata.ByteStreamHandle, *metadata.EmptySegmentFileHandle:
		return "", false, nil
	case *metadata.RelativeFileHandle:
		if !filepath.IsLocal(filepath.FromSlash(h.Path)) {
			return "", false, fmt.Errorf("%s: state file %q is outside the savepoint directory (refused)", s.MetadataPath, h.Path)
		}
		rel = h.Path
	case *metadata.FileHandle:
		rel, moved, err = s.resolveAbsolute(h.Path)
	case *metadata.SegmentFileHandle:
		rel, moved, err = s.resolveAbsolute(h.Path)
	case *metadata.KeyGroupsHandle:
		return s.LocalPath(h.Delegate)
	default:
		return "", false, fmt.Errorf("%s: unsupported stream handle %T (tag %d)", s.MetadataPath, h, h.Tag())
	}
	if err != nil {
		return "", false, err
	}
	// The root refuses symbolic links that lead out of the directory.
	fi, err := s.root.Stat(filepath.FromSlash(rel))
	if err != nil {
		return "", false, fmt.Errorf("%s: state file %q: %w", s.MetadataPath, rel, err)
	}
	if !fi.Mode().IsRegular() {
		return "", false, fmt.Errorf("%s: state file %q is not a regular file", s.MetadataPath, rel)
	}
	return rel, moved, nil
}

// localPath turns a Flink path ("file:/a/b", "file:///a/b", "/a/b") into a cleaned local path.
func localPath(p string) (string, error) {
	if strings.HasPrefix(p, "/") {
		return filepath.Clean(filepath.FromSlash(p)), nil
	}
	u, err := url.Parse(p)
	if err != nil {
		return "", fmt.Errorf("state file %q: not a path or URI: %w", p, err)
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return "", fmt.Errorf("state file %q: file URI on host %q is not local", p, u.Host)
		}
		if u.Path == "" {
			return "", fmt.Errorf("state file %q: empty path", p)
		}
		return filepath.Clean(filepath.FromSlash(u.Path)), nil
	case "":
		return "", fmt.Errorf("state file %q: want an absolute path", p)
	}
	return "", fmt.Errorf("state file %q is on %s://, which statecraft cannot read; copy the savepoint to a local directory first", p, u.Scheme)
}
