package storage

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// blockReader reads an object with ranged GETs (fetch) through a small cache of blocks, for
// every object store. The first read of a place fetches a small block (a header is all inspect
// wants of a state file); a read that goes on where a block ended fetches twice that block, up
// to maxBlock, so a streamed state file costs few requests and bounded memory.
//
// The cache holds up to maxBlocks blocks, not one, because migrations read one object from
// several places at once (parallel rescale tasks each walk their key groups, and the split
// rescale's readers take the key groups of one file in turn). With a single block every read of
// one task threw away the block of another, so each read started over at the small first block:
// a rescale of a 57 MB savepoint on S3 sent 750 GETs and read 142 MB where 2 passes needed
// 116 MB. Blocks never overlap (a fetch ends where the next cached block begins), so readers
// taking turns along a region share its blocks; the least recently used block makes room.
//
// A block fetched because a read went on where another ended is part of a sequential read (a
// rescale or a digest walks a state file from start to end): when it is first read, the block
// after it is fetched in the background, so the next GET travels while the reader parses,
// instead of the reader stopping at every block end for a whole round trip. Fetches run without
// the lock; a read of bytes a fetch is bringing waits for that fetch rather than sending a
// second request for them.
//
//	blocks: [off, off+n) done or in flight, at most cacheBytes in all, LRU
//	read(off):  inside a block         -> (wait for it,) copy; a sequential block read for
//	                                      the first time starts the fetch of the next
//	            == end of a block b    -> fetch min(2*b.n, maxBlock) there (sequential)
//	            else                   -> fetch FirstReadBlock there
//
// Memory: at most cacheBytes per open object (24 MiB), a single read asking for more aside.
type blockReader struct {
	where string // the object's URL, for errors
	size  int64
	etag  string
	// fetch returns exactly the n bytes at off (off+n <= size).
	fetch func(off, n int64) ([]byte, error)
	// fetchSeq, when set, is fetch for a sequential block (one a read went on into from the
	// block before): a store may serve it from a request left open (S3: rangeReader.fetchSeq).
	// release, when set, is called by Close, to let such requests go.
	fetchSeq func(off, n int64) ([]byte, error)
	release  func()

	mu     sync.Mutex
	blocks []*cachedBlock
	clock  int64
}

// cachedBlock is the object's bytes [off, off+n): buf and err are set when done is closed. seq
// says a read went on into it from the block before; ahead that the block after it was started.
type cachedBlock struct {
	off, n int64
	done   chan struct{}
	buf    []byte
	err    error
	seq    bool
	ahead  bool
	used   int64
}

func (b *cachedBlock) covers(off int64) bool { return off >= b.off && off < b.off+b.n }

// cacheBytes bounds the bytes of the blocks an open object keeps, in flight or read (3 blocks of
// maxBlock: the one being read, the one ahead, one for a reader taking turns), maxBlocks their
// number: small blocks (the first ones of each reader) cost little, so more of them fit.
const (
	cacheBytes = 24 << 20
	maxBlocks  = 16
)

// FirstReadBlock is what the first read at a place in an object fetches; a variable so that a
// test can make it smaller than a state file and show that a command reads only a header.
var FirstReadBlock = 64 << 10

// maxBlock bounds one fetch (a read asking for more in one call gets what it asks). Requests
// cost a server more than bytes: S3Proxy spent about 60 ms of CPU on each ranged GET of the
// bench's 126 MiB files whatever its size (32 GETs of 4 MiB: 2.4 s; one GET of all: 0.24 s), and
// 4 MiB blocks made the server's CPU for a rescale s3 -> s3 2.7 times rclone's for a copy.
var maxBlock = 8 << 20

// bodyAttempts bounds the re-requests of a range whose body broke off mid-read (a client
// retries a failed request, not a failed read of its body).
const bodyAttempts = 3

func (r *blockReader) Size() int64  { return r.size }
func (r *blockReader) ETag() string { return r.etag }

// Close lets the cached blocks go (an object may stay referenced after it is closed); fetches
// in flight end on their own and are dropped.
func (r *blockReader) Close() error {
	r.mu.Lock()
	r.blocks = nil
	r.mu.Unlock()
	if r.release != nil {
		r.release()
	}
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
		b := r.covering(off)
		if b == nil {
			size, seq := int64(FirstReadBlock), false
			if prev := r.endingAt(off); prev != nil {
				size, seq = min(2*prev.n, int64(maxBlock)), true
			}
			b = r.start(off, max(size, int64(len(p)-n)), seq)
		}
		b.used = r.clock
		select {
		case <-b.done:
		default:
			r.mu.Unlock()
			<-b.done
			r.mu.Lock()
		}
		if b.err != nil {
			r.drop(b)
			return n, b.err
		}
		if b.seq && !b.ahead {
			b.ahead = true
			if next := b.off + b.n; next < r.size && r.covering(next) == nil {
				r.start(next, min(2*b.n, int64(maxBlock)), true)
			}
		}
		c := copy(p[n:], b.buf[off-b.off:])
		n += c
		off += int64(c)
	}
	return n, nil
}

// start fetches n bytes at off in the background (fewer where the object or the next cached
// block begins), making room for the block by dropping the least recently used one.
func (r *blockReader) start(off, n int64, seq bool) *cachedBlock {
	n = min(n, r.size-off)
	for _, b := range r.blocks {
		if b.off > off && b.off < off+n {
			n = b.off - off
		}
	}
	for len(r.blocks) > 0 && (len(r.blocks) >= maxBlocks || r.cachedBytes()+n > cacheBytes) {
		lru := r.blocks[0]
		for _, b := range r.blocks[1:] {
			if b.used < lru.used {
				lru = b
			}
		}
		r.drop(lru)
	}
	b := &cachedBlock{off: off, n: n, done: make(chan struct{}), seq: seq, used: r.clock}
	r.blocks = append(r.blocks, b)
	fetch := r.fetch
	if seq && r.fetchSeq != nil {
		fetch = r.fetchSeq
	}
	go func() {
		b.buf, b.err = fetch(off, n)
		close(b.done)
	}()
	return b
}

func (r *blockReader) cachedBytes() int64 {
	var n int64
	for _, b := range r.blocks {
		n += b.n
	}
	return n
}

// drop removes b from the cache (a reader waiting for it still gets its bytes).
func (r *blockReader) drop(b *cachedBlock) {
	for i, x := range r.blocks {
		if x == b {
			r.blocks = append(r.blocks[:i], r.blocks[i+1:]...)
			return
		}
	}
}

// covering returns the cached block holding off, or nil.
func (r *blockReader) covering(off int64) *cachedBlock {
	for _, b := range r.blocks {
		if b.covers(off) {
			return b
		}
	}
	return nil
}

// endingAt returns the cached block that ends at off, or nil.
func (r *blockReader) endingAt(off int64) *cachedBlock {
	for _, b := range r.blocks {
		if b.off+b.n == off {
			return b
		}
	}
	return nil
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
