//go:build !linux

package main

// ttyColumns is 0 (unknown) where statecraft does not ask the terminal.
func ttyColumns(fd uintptr) int { return 0 }
