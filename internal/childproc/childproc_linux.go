package childproc

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// sysProcAttr asks for a new process group and the parent-death signal. Go sets the
// parent-death signal after switching to cred, which would otherwise clear it.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
}

// startRequest asks the starter thread to start cmd.
type startRequest struct {
	cmd  *exec.Cmd
	done chan error
}

// starter returns the channel of a goroutine locked to its OS thread for the life of
// the process. Linux sends the parent-death signal when the thread that forked the
// child ends, not the process (https://go.dev/issue/27505), and Go may end a thread
// any time a goroutine locked to it exits; a thread that is never released lives
// until the process does.
var starter = sync.OnceValue(func() chan<- startRequest {
	ch := make(chan startRequest)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread must outlive every child
		for r := range ch {
			r.done <- r.cmd.Start()
		}
	}()
	return ch
})

// start starts cmd from the starter thread.
func start(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	starter() <- startRequest{cmd: cmd, done: done}
	return <-done
}
