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
