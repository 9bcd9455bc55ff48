package testenv

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/oncegate/oncegate/internal/childproc"
)

// portAttempts is how many free ports a new server tries: a port chosen free can be
// taken by another process before the server binds it.
const portAttempts = 3

// launch makes a server directory (owned by cred's user when set), runs prepare in it,
// starts bin on a free port and runs setup once the server answers. On error nothing
// is left running and the directory is removed.
func launch(f *flavor, bin string, cred *childproc.Credential, prepare, setup func(s *Server) error) (_ *Server, err error) {
	dir, err := makeDir(f.kind)
	if err != nil {
		return nil, err
	}
	s := &Server{flavor: f, dir: dir, cred: cred, cmd: bin}
	defer func() {
		if err != nil {
			_ = s.close()
		}
	}()
	if err := chownTo(dir, cred); err != nil {
		return nil, fmt.Errorf("%s: %w", f.kind, err)
	}
	if prepare != nil {
		if err := prepare(s); err != nil {
			return nil, err
		}
	}
	for attempt := 1; ; attempt++ {
		if s.port, err = freePort(); err != nil {
			return nil, err
		}
		err = s.start()
		var se *startError
		if err == nil || attempt == portAttempts || !errors.As(err, &se) || !strings.Contains(se.log, "already in use") {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	if setup != nil {
		if err := setup(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// privateServer starts a server with newServer for this test only and closes it when
// the test ends; it skips or fails the test as the shared servers do when it cannot.
func privateServer(t testing.TB, name string, newServer func() (*Server, error)) *Server {
	t.Helper()
	s, err := newServer()
	if err != nil {
		unavailable(t, name, false, fmt.Errorf("private server: %w", err))
	}
	t.Cleanup(func() {
		if err := s.close(); err != nil {
			t.Errorf("testenv: %v", err)
		}
	})
	return s
}
