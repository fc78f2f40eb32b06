package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"testing"
)

// fakeObject is an object's bytes behind a fetch function that counts what it is asked for,
// for tests of blockReader's caching alone (the stores' own tests read real servers).
type fakeObject struct {
	data   []byte
	failAt int64 // a fetch holding this offset fails (-1: none)

	mu       sync.Mutex
	requests int
	fetched  int64
	ranges   [][2]int64
}

func newFakeObject(size int) *fakeObject {
	return &fakeObject{data: pattern(size), failAt: -1}
}

func (o *fakeObject) reader() *blockReader {
	return &blockReader{where: "fake://object", size: int64(len(o.data)), fetch: o.fetch}
}

// counts returns the fetches so far and their bytes.
func (o *fakeObject) counts() (int, int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.requests, o.fetched
}

func (o *fakeObject) fetch(off, n int64) ([]byte, error) {
	o.mu.Lock()
	o.requests++
	o.fetched += n
	o.ranges = append(o.ranges, [2]int64{off, off + n})
	o.mu.Unlock()
	if off+n > int64(len(o.data)) {
		return nil, fmt.Errorf("fetch [%d, %d) past the end %d", off, off+n, len(o.data))
	}
	if o.failAt >= off && o.failAt < off+n {
		return nil, errors.New("injected failure")
	}
	return append([]byte(nil), o.data[off:off+n]...), nil
}

// settle waits for every fetch r has in flight.
func settle(r *blockReader) {
	r.mu.Lock()
	bs := append([]*cachedBlock(nil), r.blocks...)
	r.mu.Unlock()
	for _, b := range bs {
		<-b.done
	}
}

// cached returns r's block holding off, or nil.
func cached(r *blockReader, off int64) *cachedBlock {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.covering(off)
}

// readRange reads [from, to) of r in reads of chunk bytes, as a bufio.Reader over a
// SectionReader does, and compares them with want.
func readRange(r io.ReaderAt, want []byte, from, to int64, chunk int) error {
	buf := make([]byte, chunk)
	for off := from; off < to; {
		n := min(int64(chunk), to-off)
		m, err := r.ReadAt(buf[:n], off)
		if err != nil && !(err == io.EOF && int64(m) == n) {
			return fmt.Errorf("ReadAt(%d, %d) = %d, %v", off, n, m, err)
		}
		if !bytes.Equal(buf[:m], want[off:off+int64(m)]) {
			return fmt.Errorf("ReadAt(%d, %d): wrong bytes", off, n)
		}
		off += int64(m)
	}
	return nil
}

// TestBlockReader: reads through the block cache return the object's bytes; a sequential read
// fetches every byte once, in blocks that double up to maxBlock, the next one before the reader
// reaches it, keeping at most cacheBytes; readers taking turns along one region (a parallel
// rescale's readers) share its blocks; a header read costs one small fetch; a failed fetch is the
// failing read's error.
func TestBlockReader(t *testing.T) {
	const size = 21<<20 + 12345
	t.Run("sequential", func(t *testing.T) {
		o := newFakeObject(size)
		r := o.reader()
		if err := readRange(r, o.data, 0, size, 64<<10); err != nil {
			t.Fatal(err)
		}
		if n := r.cachedBytes(); n > cacheBytes {
			t.Errorf("the cache holds %d bytes, over cacheBytes", n)
		}
		requests, fetched := o.counts()
		if fetched != size {
			t.Errorf("fetched %d bytes of a %d-byte object read once", fetched, size)
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		for i, rg := range o.ranges {
			if i > 0 && rg[0] != o.ranges[i-1][1] {
				t.Fatalf("fetch %d is [%d, %d), not where fetch %d ended (%d)", i, rg[0], rg[1], i-1, o.ranges[i-1][1])
			}
			if rg[1]-rg[0] > int64(maxBlock) {
				t.Errorf("fetch %d is %d bytes, over maxBlock", i, rg[1]-rg[0])
			}
		}
		// 64K, 128K, ... up to maxBlock/2 (k fetches, maxBlock minus 64K), then maxBlock blocks.
		k := 0
		for b := 64 << 10; b < maxBlock; b *= 2 {
			k++
		}
		if want := k + (size-(maxBlock-64<<10)+maxBlock-1)/maxBlock; requests != want {
			t.Errorf("%d fetches, want %d", requests, want)
		}
	})
	t.Run("read ahead", func(t *testing.T) {
		o := newFakeObject(size)
		r := o.reader()
		// Read to the end of the third block (64K + 128K + 256K) and wait: the fourth is
		// being fetched though nobody asked for it yet.
		if err := readRange(r, o.data, 0, 448<<10, 64<<10); err != nil {
			t.Fatal(err)
		}
		f := cached(r, 448<<10)
		if f == nil || f.off != 448<<10 || f.n != 512<<10 {
			t.Fatalf("after three blocks read, the block fetched ahead is %+v, want [448K, +512K)", f)
		}
		settle(r)
		before, _ := o.counts()
		if err := readRange(r, o.data, 448<<10, 960<<10, 64<<10); err != nil {
			t.Fatal(err)
		}
		next := cached(r, 960<<10)
		if next == nil || next.off != 960<<10 || next.n != 1<<20 {
			t.Fatalf("after the block fetched ahead was read, the next block ahead is %+v, want [960K, +1M)", next)
		}
		settle(r)
		if after, _ := o.counts(); after != before+1 {
			t.Errorf("reading the block fetched ahead sent %d requests, want 1 (the next block ahead)", after-before)
		}
	})
	t.Run("readers taking turns", func(t *testing.T) {
		o := newFakeObject(size)
		r := o.reader()
		// Two readers take 1 MiB pieces in turn, as the split rescale's readers take key
		// groups, each piece in reads of 64 KiB; they interleave in a fixed order, each read
		// after every fetch in flight ended (settle), so that the count is the same on every
		// run: reader A reads a quarter of piece 2i, B a quarter of piece 2i+1, and so on.
		const piece, quarter = 1 << 20, 1 << 18
		for p := int64(0); p < 16; p += 2 {
			for q := int64(0); q < 4; q++ {
				for _, at := range []int64{p*piece + q*quarter, (p+1)*piece + q*quarter} {
					settle(r)
					if err := readRange(r, o.data, at, at+quarter, 64<<10); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		settle(r)
		// Without sharing, each reader would fetch the whole 16 MiB region. The readers share
		// the blocks: no byte is fetched twice (a fetch ends where the next cached block
		// begins), and nothing past the region but the blocks fetched ahead.
		o.mu.Lock()
		rs := append([][2]int64(nil), o.ranges...)
		o.mu.Unlock()
		sort.Slice(rs, func(i, j int) bool { return rs[i][0] < rs[j][0] })
		for i := 1; i < len(rs); i++ {
			if rs[i][0] < rs[i-1][1] {
				t.Errorf("bytes [%d, %d) fetched twice", rs[i][0], min(rs[i][1], rs[i-1][1]))
			}
		}
		if _, fetched := o.counts(); fetched > 16<<20+2*int64(maxBlock) {
			t.Errorf("fetched %d bytes reading 16 MiB in turns, want at most %d", fetched, 16<<20+2*maxBlock)
		}
	})
	t.Run("concurrent readers", func(t *testing.T) {
		o := newFakeObject(size)
		r := o.reader()
		var wg sync.WaitGroup
		errs := make(chan error, 6)
		for w := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				from := int64(w) * 3 << 20
				errs <- readRange(r, o.data, from+int64(w), min(from+(4<<20), size), 4096+w)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("header", func(t *testing.T) {
		o := newFakeObject(size)
		if err := readRange(o.reader(), o.data, 5<<20, 5<<20+100, 100); err != nil {
			t.Fatal(err)
		}
		if requests, fetched := o.counts(); requests != 1 || fetched != int64(FirstReadBlock) {
			t.Errorf("a 100-byte read: %d fetches, %d bytes; want 1 of %d", requests, fetched, FirstReadBlock)
		}
	})
	t.Run("failure", func(t *testing.T) {
		o := newFakeObject(size)
		o.failAt = 3 << 20
		err := readRange(o.reader(), o.data, 0, size, 64<<10)
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte("injected failure")) {
			t.Errorf("read over a failing fetch: %v", err)
		}
	})
}
