package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"sync"

	"github.com/statecraft/statecraft/internal/safeio"
)

// localStore is a directory on a local disk. Every access goes through an os.Root on the
// directory: a name, or a symbolic link, leading out of it is refused by the kernel-backed root.
type localStore struct {
	loc Location

	mu   sync.Mutex
	root *os.Root // opened on first use: a destination may not exist yet

	read, written, requests counter
}

func openLocal(l Location) (Store, error) {
	abs, err := filepath.Abs(l.Path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Path, err)
	}
	l.Path = abs
	s := &localStore{loc: l}
	s.read, s.written, s.requests = counters(Local)
	return s, nil
}

func (s *localStore) Location() Location { return s.loc }

// dir returns the root, opening it on first use; with create, a missing directory is made.
func (s *localStore) dir(create bool) (*os.Root, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.root != nil {
		return s.root, nil
	}
	if create {
		if err := os.MkdirAll(s.loc.Path, 0o755); err != nil {
			return nil, fmt.Errorf("create directory %s: %w", s.loc.Path, err)
		}
	}
	r, err := os.OpenRoot(s.loc.Path)
	if err != nil {
		return nil, fmt.Errorf("open directory %s: %w", s.loc.Path, err)
	}
	s.root = r
	return r, nil
}

func (s *localStore) path(name string) string {
	return filepath.Join(s.loc.Path, filepath.FromSlash(name))
}

func (s *localStore) Stat(_ context.Context, name string) (Info, error) {
	if err := CheckName(name); err != nil {
		return Info{}, fmt.Errorf("%s: %w", s.loc, err)
	}
	r, err := s.dir(false)
	if err != nil {
		return Info{}, err
	}
	fi, err := r.Stat(filepath.FromSlash(name))
	if err != nil {
		return Info{}, fmt.Errorf("stat %s: %w", s.path(name), unwrapPath(err))
	}
	if !fi.Mode().IsRegular() {
		return Info{}, fmt.Errorf("%s is not a regular file (%v)", s.path(name), fi.Mode().Type())
	}
	return Info{Name: name, Size: fi.Size()}, nil
}

func (s *localStore) List(_ context.Context, dir string) ([]Info, error) {
	r, err := s.dir(false)
	if err != nil {
		return nil, err
	}
	start := "."
	if dir != "" {
		if err := CheckName(dir); err != nil {
			return nil, fmt.Errorf("%s: %w", s.loc, err)
		}
		start = filepath.FromSlash(dir)
	}
	var out []Info
	err = fs.WalkDir(r.FS(), filepath.ToSlash(start), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, Info{Name: path.Clean(p), Size: fi.Size()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", s.path(dir), err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

type localObject struct {
	f    *os.File
	size int64
	read *counter
}

func (o *localObject) ReadAt(p []byte, off int64) (int, error) {
	n, err := o.f.ReadAt(p, off)
	o.read.Add(int64(n))
	return n, err
}
func (o *localObject) Size() int64  { return o.size }
func (o *localObject) Close() error { return o.f.Close() }

func (s *localStore) Open(ctx context.Context, name string) (Object, error) {
	// Stat first: opening a named pipe (or a device) would block or read forever, so anything
	// but a regular file is refused before it is opened. The check after opening stays for a
	// file swapped in between.
	if _, err := s.Stat(ctx, name); err != nil {
		return nil, err
	}
	r, err := s.dir(false)
	if err != nil {
		return nil, err
	}
	f, err := r.Open(filepath.FromSlash(name))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", s.path(name), unwrapPath(err))
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = errors.New("not a regular file")
		}
		return nil, fmt.Errorf("open %s: %w", s.path(name), err)
	}
	return &localObject{f: f, size: fi.Size(), read: &s.read}, nil
}

// localWriter writes to a temporary name beside the target; Commit fsyncs and renames.
type localWriter struct {
	s         *localStore
	r         *os.Root
	f         *os.File
	tmp, name string
	done      bool
}

func (s *localStore) Create(_ context.Context, name string) (Writer, error) {
	if err := CheckName(name); err != nil {
		return nil, fmt.Errorf("%s: %w", s.loc, err)
	}
	r, err := s.dir(true)
	if err != nil {
		return nil, err
	}
	dir, base := path.Split(name)
	if dir != "" {
		if err := r.MkdirAll(filepath.FromSlash(path.Clean(dir)), 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", s.path(dir), unwrapPath(err))
		}
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := path.Join(dir, safeio.TempPrefix+base+"-"+hex.EncodeToString(rnd[:]))
	f, err := r.OpenFile(filepath.FromSlash(tmp), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", s.path(tmp), unwrapPath(err))
	}
	return &localWriter{s: s, r: r, f: f, tmp: tmp, name: name}, nil
}

func (w *localWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.s.written.Add(int64(n))
	if err != nil {
		return n, fmt.Errorf("write %s: %w", w.s.path(w.tmp), unwrapPath(err))
	}
	return n, nil
}

func (w *localWriter) Commit() error {
	if w.done {
		return fmt.Errorf("commit %s: already committed or aborted", w.s.path(w.name))
	}
	w.done = true
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.r.Rename(filepath.FromSlash(w.tmp), filepath.FromSlash(w.name))
	}
	if err == nil {
		err = safeio.SyncDir(filepath.Dir(w.s.path(w.name)))
	}
	if err != nil {
		w.r.Remove(filepath.FromSlash(w.tmp))
		return fmt.Errorf("commit %s: %w", w.s.path(w.name), unwrapPath(err))
	}
	return nil
}

func (w *localWriter) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.f.Close()
	if err := w.r.Remove(filepath.FromSlash(w.tmp)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("abort %s: %w", w.s.path(w.tmp), unwrapPath(err))
	}
	return nil
}

// Copy hard-links within local disks (the savepoint's files are immutable once written, so a
// link is a copy that costs nothing) and copies when the link fails (another file system) or the
// source is on another kind of store.
func (s *localStore) Copy(ctx context.Context, dst string, src Store, srcName string) (bool, error) {
	if ls, ok := src.(*localStore); ok {
		if err := CheckName(dst); err != nil {
			return false, fmt.Errorf("%s: %w", s.loc, err)
		}
		if _, err := ls.Stat(ctx, srcName); err != nil {
			return false, err
		}
		r, err := s.dir(true)
		if err != nil {
			return false, err
		}
		if dir := path.Dir(dst); dir != "." {
			if err := r.MkdirAll(filepath.FromSlash(dir), 0o755); err != nil {
				return false, fmt.Errorf("create %s: %w", s.path(dir), unwrapPath(err))
			}
		}
		// The link is made by path, after the source was checked through its root; both paths
		// are absolute and inside their roots by CheckName.
		if err := os.Link(ls.path(srcName), s.path(dst)); err == nil {
			return true, nil
		}
	}
	return false, copyThrough(ctx, s, dst, src, srcName)
}

func (s *localStore) Remove(_ context.Context, name string) error {
	if err := CheckName(name); err != nil {
		return fmt.Errorf("%s: %w", s.loc, err)
	}
	r, err := s.dir(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := r.Remove(filepath.FromSlash(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", s.path(name), unwrapPath(err))
	}
	return nil
}

func (s *localStore) Stats() Stats {
	return Stats{Read: s.read.Load(), Written: s.written.Load()}
}

func (s *localStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.root == nil {
		return nil
	}
	err := s.root.Close()
	s.root = nil
	return err
}

// unwrapPath drops the *PathError's own (root-relative) path, since messages name the full path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

var _ io.Writer = (*localWriter)(nil)
