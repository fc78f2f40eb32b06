package storage

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// blockReader reads an object with ranged GETs (fetch) through a small cache of blocks, for
// every object store. The first read of a place fetches a small block (a header is all inspect
// wants of a state file); reads that go on where a block ended double that block, up to
// maxBlock, so a streamed state file costs few requests and bounded memory.
//
// The cache holds one block per stream, up to maxStreams streams, because migrations read one
// object from several places at once (parallel rescale tasks each walk their key groups, and a
// block feeding two new key groups is read twice, close together). With a single block every
// read of one task threw away the block of another, so each read started over at the small first
// block: a rescale of a 57 MB savepoint on S3 sent 750 GETs and read 142 MB where 2 passes needed
// 116 MB. A read that continues no stream replaces the least recently used one.
//
//	streams: [ buf @ bufOff, next ] x maxStreams     (LRU by last use)
//	read(off):  inside a buf  -> copy
//	            == end of buf -> fetch min(2*next, maxBlock) there (the stream goes on)
//	            else          -> LRU stream fetches FirstReadBlock at off
type blockReader struct {
	where string // the object's URL, for errors
	size  int64
	etag  string
	// fetch returns exactly the n bytes at off (off+n <= size).
	fetch func(off, n int64) ([]byte, error)

	mu      sync.Mutex
	streams []*readStream
	clock   int64
}

// readStream is one sequential reader's block: buf holds the object's bytes at bufOff, next is
// the size of the last fetch (the next one doubles it), used the clock of its last use.
type readStream struct {
	buf    []byte
	bufOff int64
	next   int
	used   int64
}

// maxStreams bounds the blocks an open object keeps (memory: maxStreams * maxBlock at most).
const maxStreams = 4

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

// Close lets the cached blocks go (an object may stay referenced after it is closed).
func (r *blockReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.streams = nil
	return nil
}

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
		r.clock++
		st, grow := r.stream(off)
		if st.buf != nil && off >= st.bufOff && off < st.bufOff+int64(len(st.buf)) {
			c := copy(p[n:], st.buf[off-st.bufOff:])
			st.used = r.clock
			n += c
			off += int64(c)
			continue
		}
		block := FirstReadBlock
		if grow {
			block = min(st.next*2, maxBlock)
		}
		want := max(int64(len(p)-n), int64(block))
		want = min(want, r.size-off)
		buf, err := r.fetch(off, want)
		if err != nil {
			return n, err
		}
		st.buf, st.bufOff, st.next, st.used = buf, off, block, r.clock
	}
	return n, nil
}

// stream returns the stream whose block holds off, or else the one whose block ends at off
// (grow: its next fetch doubles), or else a new or the least recently used stream.
func (r *blockReader) stream(off int64) (st *readStream, grow bool) {
	for _, s := range r.streams {
		if off >= s.bufOff && off < s.bufOff+int64(len(s.buf)) {
			return s, false
		}
	}
	for _, s := range r.streams {
		if s.next > 0 && off == s.bufOff+int64(len(s.buf)) {
			return s, true
		}
	}
	if len(r.streams) < maxStreams {
		s := &readStream{}
		r.streams = append(r.streams, s)
		return s, false
	}
	lru := r.streams[0]
	for _, s := range r.streams[1:] {
		if s.used < lru.used {
			lru = s
		}
	}
	return lru, false
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
