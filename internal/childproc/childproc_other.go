//go:build unix && !linux

package childproc

import (
	"os/exec"
	"syscall"
)

// sysProcAttr asks for a new process group. Without Linux's parent-death signal, a
// child outlives a parent that dies before stopping it.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: cred}
}

// start starts cmd.
func start(cmd *exec.Cmd) error { return cmd.Start() }
