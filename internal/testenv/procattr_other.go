//go:build unix && !linux

package testenv

import (
	"os/exec"
	"syscall"
	"time"
)

// sysProcAttr puts a server in its own process group, so a stop reaches its children.
// Without Linux's parent-death signal, a server outlives a test binary that dies
// before Main stops it.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: cred}
}

// startCmd starts cmd.
func startCmd(cmd *exec.Cmd) error { return cmd.Start() }

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
