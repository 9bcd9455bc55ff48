//go:build !unix

package emulator

import "os"

// supported reports whether this system can start the emulators: without Unix
// process groups (Windows) it cannot, and start returns ErrUnsupportedOS.
const supported = false

// terminate kills pid and returns once done is closed. It is never reached:
// start refuses before any process starts.
func terminate(pid int, done <-chan struct{}) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
	<-done
}
