//go:build unix

package emulator

import (
	"syscall"
	"time"
)

// supported reports whether this system can start the emulators: it needs
// the process groups internal/childproc gives a child.
const supported = true

// terminate sends SIGTERM to the process group led by pid, then SIGKILL after
// stopTimeout, and returns once done is closed.
func terminate(pid int, done <-chan struct{}) {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-done:
		return
	case <-time.After(stopTimeout):
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	<-done
}
