//go:build unix

package gateenv_test

import (
	"os"
	"syscall"
	"testing"
)

// sigUSR2 and sigWINCH are signals the serve tests route or ignore.
const (
	sigUSR2  = syscall.SIGUSR2
	sigWINCH = syscall.SIGWINCH
)

// raise sends sig to this process.
func raise(_ *testing.T, sig syscall.Signal) error { return syscall.Kill(os.Getpid(), sig) }
