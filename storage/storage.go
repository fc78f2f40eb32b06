// Package storage is statecraft's one seam to where savepoints live: a local directory or a
// bucket prefix on an object store. Formats and migrations speak only to Store, so they do not
// know which one they are on.
//
// A Store is rooted at a directory or key prefix; every name passed to it is slash-separated and
// relative to that root, and a name with "..", "." or empty elements is refused, so nothing is
// read or written outside the root.
//
// Writes are atomic on every store: Create returns a Writer whose bytes become visible under the
// name only at Commit (locally: a temporary file in the same directory, fsync, rename, directory
// fsync; on an object store: the PutObject or CompleteMultipartUpload that Commit sends). Abort,
// or an error before Commit, leaves nothing under the name. A savepoint writer commits _metadata
// last, so a savepoint is never visible half written.
//
// Copy copies an object within a store without moving its bytes through statecraft where the
// store allows it: a hard link on a local disk (falling back to a copy across file systems), a
// server-side CopyObject on S3 (UploadPartCopy in parts for objects over 5 GiB). Between
// different stores the bytes are streamed through.
package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync/atomic"
)

// ErrNotExist is wrapped by every "no such object or file" error, whatever the store.
var ErrNotExist = fs.ErrNotExist

// Info describes one object or file.
type Info struct {
	Name string // slash-separated, relative to the store's root
	Size int64
	// ETag is the object store's entity tag (quotes removed); empty on a local disk.
	ETag string
}

// Object is an opened object: random access to its bytes. ReadAt may be called concurrently.
type Object interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// Writer receives a new object's bytes. Nothing is visible under its name before Commit
// returns nil; Abort (safe after Commit, then a no-op) throws the bytes away.
type Writer interface {
	io.Writer
	Commit() error
	Abort() error
}

// Store is a directory or key prefix on one store.
type Store interface {
	// Location is where the store is rooted.
	Location() Location
	// Stat describes the object name; a missing object's error wraps ErrNotExist.
	Stat(ctx context.Context, name string) (Info, error)
	// List returns every object under the directory or key prefix dir ("" for the root), at
	// any depth, sorted by name.
	List(ctx context.Context, dir string) ([]Info, error)
	// Open opens name for ranged reads. Only regular files are opened on a local disk.
	Open(ctx context.Context, name string) (Object, error)
	// Create starts a new object name, made visible by Commit. Missing local directories on the
	// way are created.
	Create(ctx context.Context, name string) (Writer, error)
	// Copy makes dst (in this store) a copy of srcName in src, server-side or by a hard link
	// when the stores allow it (server is then true), streamed through otherwise.
	Copy(ctx context.Context, dst string, src Store, srcName string) (server bool, err error)
	// Remove deletes name; removing a missing object is not an error.
	Remove(ctx context.Context, name string) error
	// Stats returns the bytes read from and written to the store so far.
	Stats() Stats
	Close() error
}

// Stats counts the bytes a store moved.
type Stats struct {
	Read, Written int64
	// Requests counts the calls sent to an object store (0 on a local disk).
	Requests int64
}

// counter counts for one store and for every store of its kind (Transferred).
type counter struct {
	own atomic.Int64
	all *atomic.Int64
}

func (c *counter) Add(n int64) {
	c.own.Add(n)
	if c.all != nil {
		c.all.Add(n)
	}
}

func (c *counter) Load() int64 { return c.own.Load() }

// totals are the bytes and requests of all stores of a kind since the process started.
var totals = map[Kind]*[3]atomic.Int64{Local: {}, S3: {}, GCS: {}, AzBlob: {}}

// counters returns a store's read, written and requests counters, tied to its kind's totals.
func counters(k Kind) (read, written, requests counter) {
	t := totals[k]
	return counter{all: &t[0]}, counter{all: &t[1]}, counter{all: &t[2]}
}

// Transferred returns the bytes read and written and the requests sent by every store of kind
// k so far in this process: what progress lines and byte-counting tests report.
func Transferred(k Kind) Stats {
	t, ok := totals[k]
	if !ok {
		return Stats{}
	}
	return Stats{Read: t[0].Load(), Written: t[1].Load(), Requests: t[2].Load()}
}

// Open opens the store a location names, rooted at the location. Opening does not check that
// the root exists.
func Open(ctx context.Context, l Location) (Store, error) {
	switch l.Kind {
	case Local:
		return openLocal(l)
	case S3:
		return openS3(ctx, l)
	case GCS:
		return openGCS(ctx, l)
	case AzBlob:
		return openAzure(ctx, l)
	}
	return nil, fmt.Errorf("%s: unknown store kind %q", l, l.Kind)
}

// OpenURL parses s (see Parse) and opens its store.
func OpenURL(ctx context.Context, s string) (Store, error) {
	l, err := Parse(s)
	if err != nil {
		return nil, err
	}
	return Open(ctx, l)
}

// CheckName refuses a name that is empty, absolute, or has "", "." or ".." elements, so that a
// store never reaches outside its root whatever a savepoint's metadata says.
func CheckName(name string) error {
	if name == "" {
		return errors.New("empty object name")
	}
	for _, e := range strings.Split(name, "/") {
		if e == "" || e == "." || e == ".." {
			return fmt.Errorf("object name %q: want a relative slash-separated path without empty, \".\" or \"..\" elements", name)
		}
	}
	return nil
}

// copyThrough streams srcName of src into dst of to: the fallback Copy between stores.
func copyThrough(ctx context.Context, to Store, dst string, src Store, srcName string) error {
	in, err := src.Open(ctx, srcName)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := WriteFrom(ctx, to, dst, io.NewSectionReader(in, 0, in.Size())); err != nil {
		return fmt.Errorf("copy %s: %w", src.Location().Join(srcName), err)
	}
	return nil
}

// WriteFrom writes the object name of dst from r and commits it; on any error nothing is left
// under the name.
func WriteFrom(ctx context.Context, dst Store, name string, r io.Reader) error {
	_, err := Upload(ctx, dst, name, r)
	return err
}

// filePutter is implemented by stores that send a local file better than through a Writer
// (S3: one PutObject streamed from the file instead of a multipart upload of buffered parts).
// done is false when the store leaves this file to its Writer.
type filePutter interface {
	putFile(ctx context.Context, name string, f *os.File) (etag string, done bool, err error)
}

// Tagged is implemented by the Writers of object stores. After Commit, ETag is the entity tag
// the store gave the new object, checked against the MD5s of the bytes sent where the store's
// tags are MD5s ("" when unknown).
type Tagged interface {
	ETag() string
}

// Upload is WriteFrom that also returns the new object's ETag ("" on a local disk), so that a
// later listing can show the object is still the one written.
func Upload(ctx context.Context, dst Store, name string, r io.Reader) (etag string, err error) {
	if f, ok := r.(*os.File); ok {
		if fp, ok := dst.(filePutter); ok {
			if etag, done, err := fp.putFile(ctx, name, f); done || err != nil {
				return etag, err
			}
		}
	}
	w, err := dst.Create(ctx, name)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Abort()
		return "", fmt.Errorf("write %s: %w", dst.Location().Join(name), err)
	}
	if err := w.Commit(); err != nil {
		return "", err
	}
	if t, ok := w.(Tagged); ok {
		etag = t.ETag()
	}
	return etag, nil
}

// CopyAll copies every object of src into dst under the same names (server-side where Copy can)
// and returns the bytes copied.
func CopyAll(ctx context.Context, dst, src Store) (int64, error) {
	files, err := src.List(ctx, "")
	if err != nil {
		return 0, err
	}
	var n int64
	for _, f := range files {
		if _, err := dst.Copy(ctx, f.Name, src, f.Name); err != nil {
			return n, err
		}
		n += f.Size
	}
	return n, nil
}
