//go:build unix

package workerproc

import "syscall"

// Pause sends SIGSTOP: the process freezes until Resume.
func (p *Proc) Pause() { p.send(syscall.SIGSTOP) }

// Resume sends SIGCONT to a process Pause froze.
func (p *Proc) Resume() { p.send(syscall.SIGCONT) }
