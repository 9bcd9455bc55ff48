package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/childproc"
)

// stopTimeout bounds a graceful stop; the process group is killed after it.
const stopTimeout = 15 * time.Second

// groupExitTimeout bounds the wait for a killed server's processes to exit.
const groupExitTimeout = 5 * time.Second

// errClosed is returned when a closed Server is started again.
var errClosed = errors.New("testenv: server closed")

// flavor says how to run one kind of server in the foreground and how to ping it.
type flavor struct {
	kind         string         // "redis", "postgres" or "mysql": names dirs and logs
	stopSignal   syscall.Signal // graceful shutdown signal
	startTimeout time.Duration  // how long a start may take to answer a ping
	command      func(s *Server) *exec.Cmd
	ping         func(ctx context.Context, s *Server) error
	dsn          func(s *Server) string
}

// Server is a server process started by this package in its own temporary directory,
// listening on 127.0.0.1 on a port chosen when it was made. Its methods are safe for
// concurrent use. A Server made by PrivateRedis, PrivatePostgres or PrivateMySQL is
// stopped and its directory removed when the test that made it ends.
type Server struct {
	flavor *flavor
	dir    string
	port   int
	cred   *childproc.Credential // user the process runs as; nil means this process's user
	cmd    string                // binary path, for messages

	mu     sync.Mutex
	proc   *process // nil while stopped
	closed bool
}

// process is one run of the server binary.
type process struct {
	cmd    *exec.Cmd
	done   chan struct{} // closed when the process has exited
	err    error         // Wait's result, set before done is closed
	paused bool
}

// Addr returns the server's address, "127.0.0.1:port".
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Port returns the server's TCP port on 127.0.0.1; it never changes across restarts.
func (s *Server) Port() int { return s.port }

// Dir returns the server's temporary directory (data, server.log); it is removed
// when the server is closed.
func (s *Server) Dir() string { return s.dir }

// DSN returns what a client connects with: for Redis the address "127.0.0.1:port",
// for PostgreSQL "postgres://postgres@127.0.0.1:port/test?sslmode=disable", for MySQL
// "root@tcp(127.0.0.1:port)/test" (the go-sql-driver/mysql form; see MySQLURL for the
// URL form).
func (s *Server) DSN() string { return s.flavor.dsn(s) }

// Running reports whether the server process is up (it may be paused); a server that
// exited on its own is not.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runningLocked() != nil
}

// runningLocked returns the live process, forgetting one that has exited.
func (s *Server) runningLocked() *process {
	if s.proc != nil {
		select {
		case <-s.proc.done:
			s.proc = nil
		default:
		}
	}
	return s.proc
}

// Start starts a stopped server on the same port and data directory and waits until
// it answers a ping; it does nothing if the server is running. It fails the test if
// the server does not answer within its start timeout (10s for Redis, 60s for
// PostgreSQL and MySQL).
func (s *Server) Start(t testing.TB) {
	t.Helper()
	if err := s.start(); err != nil {
		t.Fatalf("testenv: start: %v", err)
	}
}

// Stop stops the server gracefully (SIGTERM for Redis and MySQL, SIGINT for
// PostgreSQL's fast shutdown), killing it as Kill does after 15s. A paused server is
// resumed first. It does nothing if the server is stopped. Redis keeps nothing on
// disk, so a stopped Redis loses every key; PostgreSQL and MySQL keep their data.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked(true)
}

// Kill ends the server and all its processes with SIGKILL, as a crash would, and waits
// (up to 5s) until they are gone; PostgreSQL and MySQL recover on the next Start. It
// does nothing if the server is stopped.
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked(false)
}

// Restart stops the server gracefully and starts it again on the same port, failing
// the test as Start does. A restarted Redis is empty.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop(t)
	s.Start(t)
}

// Pause freezes all the server's processes with SIGSTOP: connections stay open but
// nothing answers, as with a hung server or a network partition. It fails the test if
// the server is stopped.
func (s *Server) Pause(t testing.TB) {
	t.Helper()
	s.signal(t, sigStop, true)
}

// Resume lets a paused server's processes go on with SIGCONT. It fails the test if
// the server is stopped.
func (s *Server) Resume(t testing.TB) {
	t.Helper()
	s.signal(t, sigCont, false)
}

func (s *Server) signal(t testing.TB, sig syscall.Signal, paused bool) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runningLocked() == nil {
		t.Fatalf("testenv: %s on %s: signal %v: server is stopped", s.flavor.kind, s.Addr(), sig)
	}
	signalTree(s.proc.cmd.Process.Pid, sig)
	s.proc.paused = paused
}

// close stops the server gracefully and removes its directory; the Server cannot be
// started again.
func (s *Server) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.stopLocked(true)
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("remove %s: %w", s.dir, err)
	}
	return nil
}

// start runs the server binary and waits for it to answer a ping.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	if s.runningLocked() != nil {
		return nil
	}
	logPath := filepath.Join(s.dir, "server.log")
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s: open log: %w", s.flavor.kind, err)
	}
	defer logFile.Close()
	logStart, _ := logFile.Seek(0, io.SeekEnd)

	cmd := s.flavor.command(s)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group and, on Linux, the parent-death signal: no server
	// outlives a crashed or killed test binary.
	if err := childproc.Start(cmd, s.cred); err != nil {
		return fmt.Errorf("%s: %w", s.flavor.kind, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	s.proc = p
	if err := s.awaitReady(p); err != nil {
		s.stopLocked(false)
		return &startError{
			msg: fmt.Sprintf("%s (%s) on %s: %v", s.flavor.kind, s.cmd, s.Addr(), err),
			log: readFrom(logPath, logStart),
		}
	}
	return nil
}

// awaitReady pings until the server answers, exits, or the start timeout passes.
func (s *Server) awaitReady(p *process) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.flavor.startTimeout)
	defer cancel()
	var last error
	for {
		pingCtx, pingCancel := context.WithTimeout(ctx, 2*time.Second)
		last = s.flavor.ping(pingCtx, s)
		pingCancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited before answering: %v", p.err)
		case <-ctx.Done():
			return fmt.Errorf("no answer within %v: %w", s.flavor.startTimeout, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stopLocked ends the running process, gracefully first when asked, and waits for it.
func (s *Server) stopLocked(graceful bool) {
	p := s.runningLocked()
	if p == nil {
		return
	}
	s.proc = nil
	pid := p.cmd.Process.Pid
	if p.paused {
		signalTree(pid, sigCont)
	}
	if graceful {
		_ = signalPid(pid, s.flavor.stopSignal)
		select {
		case <-p.done:
		case <-time.After(stopTimeout):
		}
	}
	select {
	case <-p.done:
		// Reaped: its group id may be reused, so it is not signalled. A graceful
		// PostgreSQL postmaster exits only after its backends.
		return
	default:
	}
	// No child (a PostgreSQL backend) may outlive a kill, and the next start must
	// not find one still exiting.
	killTree(pid, groupExitTimeout)
	<-p.done
}

// startError is a failed start with what the server logged during it.
type startError struct {
	msg string
	log string
}

func (e *startError) Error() string {
	if e.log == "" {
		return e.msg
	}
	return e.msg + "\nserver log:\n" + e.log
}
