//go:build !unix

package childproc

import (
	"fmt"
	"os/exec"
	"runtime"
)

// Credential stands in for syscall.Credential, which exists only on Unix;
// Start refuses every child here, so it is never used.
type Credential struct{}

// Start refuses to start cmd: without process groups and a parent-death
// signal a child could outlive the process that started it. The error wraps
// ErrUnsupported.
func Start(cmd *exec.Cmd, _ *Credential) error {
	return fmt.Errorf("childproc: start %s on %s: %w", cmd.Path, runtime.GOOS, ErrUnsupported)
}
