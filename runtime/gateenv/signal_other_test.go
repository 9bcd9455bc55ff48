//go:build !unix

package gateenv_test

import (
	"syscall"
	"testing"
)

// sigUSR2 and sigWINCH stand in for signals Windows lacks; nothing sends them.
const (
	sigUSR2  = syscall.Signal(0x1f)
	sigWINCH = syscall.Signal(0x1c)
)

// raise skips the test: a process cannot signal itself on Windows.
func raise(t *testing.T, _ syscall.Signal) error {
	t.Skip("signalling this process is supported on Linux and macOS")
	return nil
}
