package main

import (
	"syscall"
	"unsafe"
)

// ttyColumns asks the terminal on fd for its width (TIOCGWINSZ); 0 when fd is not a terminal.
func ttyColumns(fd uintptr) int {
	var ws struct{ Row, Col, X, Y uint16 }
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws))); e != 0 {
		return 0
	}
	return int(ws.Col)
}
