package migrate

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// writebackChunk is how many bytes of an output file are handed to the kernel between two
// requests to start writing them to disk (startWriteback).
const writebackChunk = 8 << 20

// writebackFile writes to an output state file and, every writebackChunk bytes, asks the kernel
// to start writing what it has so far to disk. The fsync before _metadata is written must wait
// for every byte to reach the disk; started early, that writing overlaps the rescale's reading
// and re-keying, and the final fsync only waits for the last chunk. Without the requests the
// kernel would hold the dirty pages until the fsync and write a whole file (hundreds of MiB)
// then, with the CPU idle. Durability still rests on the fsync alone.
type writebackFile struct {
	f       *os.File
	scratch bool  // in a scratch stage (see markScratch): never asks
	n       int64 // bytes written
	started int64 // bytes whose writing to disk was requested
}

func (w *writebackFile) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.n += int64(n)
	if !w.scratch && w.n-w.started >= writebackChunk {
		startWriteback(w.f, w.started, w.n-w.started)
		w.started = w.n
	}
	return n, err
}

// The stage of a run whose output goes to an object store is scratch: its files are uploaded,
// re-read from the store by verification, and deleted with the stage, so they are never the
// result and need not reach the disk. Its state files are neither fsynced nor pushed to disk
// early (writebackFile); the upload's bytes come from the page cache, and the deleted files'
// dirty pages are mostly never written at all. (A 10M-entry rescale to S3 wrote and fsynced
// its 252 MiB there only to delete them.) The durability of the result is the store's: an
// object is stored once its PutObject returns, and _metadata is written last.
var scratchStages struct {
	sync.Mutex
	dirs []string // each ending in a separator
}

// markScratch marks the stage dir scratch until the returned function is called.
func markScratch(dir string) (unmark func()) {
	d := filepath.Clean(dir) + string(filepath.Separator)
	scratchStages.Lock()
	scratchStages.dirs = append(scratchStages.dirs, d)
	scratchStages.Unlock()
	return func() {
		scratchStages.Lock()
		defer scratchStages.Unlock()
		for i, x := range scratchStages.dirs {
			if x == d {
				scratchStages.dirs = append(scratchStages.dirs[:i], scratchStages.dirs[i+1:]...)
				return
			}
		}
	}
}

// inScratch reports whether the file path lies in a scratch stage.
func inScratch(path string) bool {
	scratchStages.Lock()
	defer scratchStages.Unlock()
	for _, d := range scratchStages.dirs {
		if strings.HasPrefix(path, d) {
			return true
		}
	}
	return false
}
