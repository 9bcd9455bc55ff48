//go:build unix && !linux

package testenv

import (
	"syscall"
	"time"
)

// signalTree sends sig to the process group led by pid.
func signalTree(pid int, sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }

// killTree SIGKILLs the process group led by pid and waits up to timeout until it
// is gone.
func killTree(pid int, timeout time.Duration) {
	signalTree(pid, syscall.SIGKILL)
	deadline := time.Now().Add(timeout)
	for syscall.Kill(-pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}
