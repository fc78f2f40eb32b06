package migrate

import "os"

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
	n       int64 // bytes written
	started int64 // bytes whose writing to disk was requested
}

func (w *writebackFile) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.n += int64(n)
	if w.n-w.started >= writebackChunk {
		startWriteback(w.f, w.started, w.n-w.started)
		w.started = w.n
	}
	return n, err
}
