//go:build unix

package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"

	"github.com/oncegate/oncegate/internal/childproc"
)

// sigStop and sigCont pause and resume a server (Server.Pause, Server.Resume).
const (
	sigStop = syscall.SIGSTOP
	sigCont = syscall.SIGCONT
)

// signalPid sends sig to the process pid.
func signalPid(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// processAlive reports whether a process with this pid exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// chownTo gives dir to cred's user; a nil cred leaves it as it is.
func chownTo(dir string, cred *childproc.Credential) error {
	if cred == nil {
		return nil
	}
	return os.Chown(dir, int(cred.Uid), int(cred.Gid))
}

// runAs makes cmd run as cred's user (nil: this process's).
func runAs(cmd *exec.Cmd, cred *childproc.Credential) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
}

// postgresCredential is nil for a non-root process; as root it is the postgres user,
// or nobody, since postgres refuses to run as root.
func postgresCredential() (*childproc.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 == nil && err2 == nil {
			return &childproc.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
		}
	}
	return nil, fmt.Errorf("postgres refuses to run as root, and neither user postgres nor nobody exists")
}
