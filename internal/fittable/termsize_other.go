//go:build !linux && !darwin

package fittable

import "os"

// TerminalWidth is 0 (no limit) where statecraft does not ask the terminal.
func TerminalWidth(f *os.File) int { return 0 }
