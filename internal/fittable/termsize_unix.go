//go:build linux || darwin

package fittable

import (
	"os"
	"syscall"
	"unsafe"
)

// TerminalWidth returns the number of columns of the terminal f is, or 0 when f is not a
// terminal (a pipe, a file) or its size is unknown.
func TerminalWidth(f *os.File) int {
	var ws struct{ row, col, x, y uint16 }
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws)))
	if errno != 0 {
		return 0
	}
	return int(ws.col)
}
