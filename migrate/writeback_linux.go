package migrate

import (
	"os"
	"syscall"
)

// startWriteback asks Linux to start writing bytes [off, off+n) of f to disk, without waiting
// (sync_file_range with SYNC_FILE_RANGE_WRITE). It is only a hint: an error is ignored, since
// the fsync that follows reports any failure to write.
func startWriteback(f *os.File, off, n int64) {
	const syncFileRangeWrite = 2 // SYNC_FILE_RANGE_WRITE
	syscall.SyncFileRange(int(f.Fd()), off, n, syncFileRangeWrite)
}
