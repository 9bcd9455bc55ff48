//go:build !unix

package testenv

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/oncegate/oncegate/internal/childproc"
)

// The package builds on Windows so that the tests importing it compile there,
// but it starts no server: internal/childproc refuses to start one, so every
// private server fails with childproc.ErrUnsupported, and the shared servers
// are reached over TCP as anywhere else.

// sigStop and sigCont stand in for SIGSTOP and SIGCONT, which Windows lacks.
const (
	sigStop = syscall.Signal(-1)
	sigCont = syscall.Signal(-2)
)

// errNoSignals says signals other than a kill are not sent here.
var errNoSignals = errors.New("testenv: signals are supported on Linux and macOS")

// signalPid kills pid for SIGKILL and refuses every other signal.
func signalPid(pid int, sig syscall.Signal) error {
	if sig != syscall.SIGKILL {
		return errNoSignals
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// signalTree signals the process pid alone (see signalPid).
func signalTree(pid int, sig syscall.Signal) { _ = signalPid(pid, sig) }

// killTree kills pid; there is no group to wait for.
func killTree(pid int, _ time.Duration) { signalTree(pid, syscall.SIGKILL) }

// processAlive reports whether a process with this pid exists.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}

// chownTo does nothing: servers never run as another user here.
func chownTo(string, *childproc.Credential) error { return nil }

// runAs does nothing (see chownTo).
func runAs(*exec.Cmd, *childproc.Credential) {}

// postgresCredential is nil: servers run as this process's user.
func postgresCredential() (*childproc.Credential, error) { return nil, nil }
