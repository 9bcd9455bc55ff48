//go:build unix

package childproc

import (
	"os/exec"
	"syscall"
)

// Credential is the user a child runs as (syscall.Credential on Unix).
type Credential = syscall.Credential

// Start starts cmd (not yet started) as the leader of a new process group, running as
// cred's user when cred is not nil, and on Linux with SIGKILL as its parent-death
// signal. It replaces cmd.SysProcAttr. The error is exec.Cmd.Start's.
func Start(cmd *exec.Cmd, cred *Credential) error {
	cmd.SysProcAttr = sysProcAttr(cred)
	return start(cmd)
}
