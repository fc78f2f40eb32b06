package storage

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// blockReader reads an object with ranged GETs (fetch) through a one-block cache, for every
// object store. The first read of a place fetches a small block (a header is all inspect wants
// of a state file); reads that go on where the last block ended double the block, up to
// maxBlock, so a streamed state file costs few requests and bounded memory.
type blockReader struct {
	where string // the object's URL, for errors
	size  int64
	etag  string
	// fetch returns exactly the n bytes at off (off+n <= size).
	fetch func(off, n int64) ([]byte, error)

	mu     sync.Mutex
	buf    []byte
	bufOff int64
	next   int
}

// FirstReadBlock is what the first read at a place in an object fetches; a variable so that a
// test can make it smaller than a state file and show that a command reads only a header.
var FirstReadBlock = 64 << 10

const (
	maxBlock = 8 << 20
	// bodyAttempts bounds the re-requests of a range whose body broke off mid-read (a client
	// retries a failed request, not a failed read of its body).
	bodyAttempts = 3
)

func (r *blockReader) Size() int64  { return r.size }
func (r *blockReader) ETag() string { return r.etag }
func (r *blockReader) Close() error { return nil }

func (r *blockReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read %s: negative offset %d", r.where, off)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for n < len(p) {
		if off >= r.size {
			return n, io.EOF
		}
		if off >= r.bufOff && off < r.bufOff+int64(len(r.buf)) {
			c := copy(p[n:], r.buf[off-r.bufOff:])
			n += c
			off += int64(c)
			continue
		}
		block := FirstReadBlock
		if off == r.bufOff+int64(len(r.buf)) && r.next > 0 {
			block = min(r.next*2, maxBlock)
		}
		r.next = block
		want := max(int64(len(p)-n), int64(block))
		want = min(want, r.size-off)
		buf, err := r.fetch(off, want)
		if err != nil {
			return n, err
		}
		r.buf, r.bufOff = buf, off
	}
	return n, nil
}

// readBody reads exactly n bytes from the body get opens, opening it again (at most
// bodyAttempts times in all) when a body breaks off mid-read; read counts the bytes received.
// A failed get is returned as it is (the store's client retried it already); a body that kept
// breaking off is "reading the body: ...".
func readBody(ctx context.Context, n int64, read *counter, get func() (io.ReadCloser, error)) ([]byte, error) {
	buf := make([]byte, n)
	var last error
	for range bodyAttempts {
		body, err := get()
		if err != nil {
			return nil, err
		}
		m, err := io.ReadFull(body, buf)
		body.Close()
		read.Add(int64(m))
		if err == nil {
			return buf, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("reading the body: %w", last)
}
