package migrate

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
)

// A data file that is a regular file is mapped into memory and read where it lies: reading it
// into buffers copied every byte once more (about 0.2 s of CPU for the 1.13 GiB dump of the
// 10M-entry bench savepoint). A mapped file that shrinks while it is read (another program
// truncating it) makes the pages past its end fault; the goroutines reading the mapping turn
// that fault into an error (whileMapped) instead of a crash.
//
// The pages of a block whose records are applied are given back (mappedReleaser): a mapped
// page counts in the process's resident set as long as it stays mapped, so reading the whole
// 1.13 GiB dump would have shown a peak RSS of 1.17 GiB, though the memory is the page cache's.
// Giving pages back drops them from the mapping only: the file's pages stay cached, and a page
// touched again (the page a block shares with the next) is simply mapped again.

// mapData maps f read-only (nil: f is not a regular file, is empty, or cannot be mapped; the
// caller then reads it).
func mapData(f *os.File) []byte {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() <= 0 || fi.Size() != int64(int(fi.Size())) {
		return nil
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	_ = syscall.Madvise(m, syscall.MADV_SEQUENTIAL) // a hint: read ahead; nothing depends on it
	return m
}

// testHookMapped lets a test change the data file once it is mapped.
var testHookMapped func(name string)

// whileMapped runs fn, which reads the mapping of the data file name, and returns its error,
// or an error naming the file when a page of the mapping faulted (the file shrank while it was
// read). Other panics are not recovered.
func whileMapped(name string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if re, ok := r.(runtime.Error); ok {
				if _, fault := re.(interface{ Addr() uintptr }); fault {
					err = fmt.Errorf("%s: the file changed while it was read (it is shorter than when it was opened): %v", name, re)
					return
				}
			}
			panic(r)
		}
	}()
	return fn()
}

// madvPopulateRead is Linux's MADV_POPULATE_READ (5.14 and later; not in package syscall).
const madvPopulateRead = 0x16

// populate maps the pages of m[from:to], a block of the mapping, in one call, before its
// lines are cut and counted, instead of faulting them in one by one (64 KiB at a time).
// Advice, not a promise: an older kernel refuses it, and the pages fault in as before.
func populate(m []byte, from, to int) {
	from -= from % os.Getpagesize() // madvise wants an address on a page boundary
	_ = syscall.Madvise(m[from:to], madvPopulateRead)
}

// mappedReleaser gives back the pages of a mapping that are read for good, in order.
type mappedReleaser struct {
	m    []byte
	done int // pages before this offset are given back
	page int
}

func newMappedReleaser(m []byte) *mappedReleaser {
	return &mappedReleaser{m: m, page: os.Getpagesize()}
}

// release gives back every whole page before offset end of the mapping (end: the end of the
// last block applied; every block before it is applied too).
func (r *mappedReleaser) release(end int) {
	end -= end % r.page
	if end <= r.done {
		return
	}
	// Advice, not a promise: should it fail, the pages stay mapped and the RSS higher.
	_ = syscall.Madvise(r.m[r.done:end], syscall.MADV_DONTNEED)
	r.done = end
}
