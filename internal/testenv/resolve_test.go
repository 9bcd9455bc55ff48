package testenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// recordTB stands in for a test so a resolver's Skipf and Fatalf can be observed.
type recordTB struct {
	testing.TB
	outcome string // "", "skip" or "fatal"
	msg     string
}

func (r *recordTB) Helper()                    {}
func (r *recordTB) Logf(f string, args ...any) { r.TB.Logf(f, args...) }
func (r *recordTB) Skipf(f string, args ...any) {
	r.outcome, r.msg = "skip", fmt.Sprintf(f, args...)
	runtime.Goexit()
}
func (r *recordTB) Fatalf(f string, args ...any) {
	r.outcome, r.msg = "fatal", fmt.Sprintf(f, args...)
	runtime.Goexit()
}

// resolveWith runs r.get on a recordTB in its own goroutine, as Goexit needs.
func resolveWith(t *testing.T, r *resolver) (dsn string, rec *recordTB) {
	rec = &recordTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		dsn = r.get(rec)
	}()
	<-done
	if r.server != nil {
		t.Cleanup(func() { _ = r.server.close() })
	}
	return dsn, rec
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
}

const fakeEnv = "ONCEGATE_TEST_FAKE_REDIS_ADDR"

// fakeRedisResolver resolves through fakeEnv and defaultAddr with real Redis pings.
func fakeRedisResolver(defaultAddr string, private func() (*Server, error)) *resolver {
	return &resolver{name: "Redis", envVar: fakeEnv, defaultDSN: defaultAddr, ping: pingRedis, private: private}
}

func failingPrivate() (*Server, error) { return nil, errors.New("no binary here") }

func TestResolveOrder(t *testing.T) {
	live := PrivateRedis(t).Addr()
	tests := []struct {
		name       string
		env        string // fakeEnv's value
		force      string // ONCEGATE_TEST_FORCE_PRIVATE's value
		ci         string
		defaultDSN string
		private    func() (*Server, error)
		wantSource string // "" when the test is skipped or failed
		wantDSN    string // checked when not empty
		wantOut    string // "skip" or "fatal"
	}{
		{name: "variable first", env: live, defaultDSN: closedAddr(t), private: failingPrivate, wantSource: "env", wantDSN: live},
		{name: "default port next", defaultDSN: live, private: failingPrivate, wantSource: "default", wantDSN: live},
		{name: "private last", defaultDSN: closedAddr(t), private: newRedisServer, wantSource: "private"},
		{name: "force private", env: live, force: "1", defaultDSN: live, private: newRedisServer, wantSource: "private"},
		{name: "dead variable fails outside CI", env: closedAddr(t), defaultDSN: live, private: newRedisServer, wantOut: "fatal"},
		{name: "none skips outside CI", defaultDSN: closedAddr(t), private: failingPrivate, wantOut: "skip"},
		{name: "none fails under CI", ci: "true", defaultDSN: closedAddr(t), private: failingPrivate, wantOut: "fatal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(fakeEnv, tt.env)
			t.Setenv(envForcePrivate, tt.force)
			t.Setenv(envCI, tt.ci)
			r := fakeRedisResolver(tt.defaultDSN, tt.private)
			dsn, rec := resolveWith(t, r)
			if rec.outcome != tt.wantOut {
				t.Fatalf("outcome = %q (%s), want %q", rec.outcome, rec.msg, tt.wantOut)
			}
			if tt.wantOut != "" {
				if !strings.Contains(rec.msg, "no Redis server") {
					t.Errorf("message %q does not name the missing server", rec.msg)
				}
				return
			}
			if r.source != tt.wantSource {
				t.Fatalf("source = %q, want %q", r.source, tt.wantSource)
			}
			if tt.wantDSN != "" && dsn != tt.wantDSN {
				t.Fatalf("dsn = %q, want %q", dsn, tt.wantDSN)
			}
			if err := probe(pingRedis, dsn); err != nil {
				t.Fatalf("PING %s: %v", dsn, err)
			}
		})
	}
}

func TestResolveStartsPrivateServers(t *testing.T) {
	tests := []struct {
		name    string
		r       *resolver
		closed  string // a default DSN nothing answers
		checkDB func(t *testing.T, dsn string)
	}{
		{
			name: "PostgreSQL", r: &resolver{name: "PostgreSQL", envVar: fakeEnv, ping: pingPostgres, private: newPostgresServer},
			closed:  postgresDSN(FreePort(t), "test"),
			checkDB: func(t *testing.T, dsn string) { countPG(t, dsn, "SELECT 1") },
		},
		{
			name: "MySQL", r: &resolver{name: "MySQL", envVar: fakeEnv, ping: pingMySQL, private: newMySQLServer},
			closed:  "root@tcp(" + closedAddr(t) + ")/test",
			checkDB: func(t *testing.T, dsn string) { countMySQL(t, dsn, "SELECT 1") },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(fakeEnv, "")
			tt.r.defaultDSN = tt.closed
			dsn, rec := resolveWith(t, tt.r)
			if rec.outcome != "" {
				t.Fatalf("%s: %s", rec.outcome, rec.msg)
			}
			if tt.r.source != "private" || dsn == tt.closed {
				t.Fatalf("source = %q, dsn = %q; want a private server", tt.r.source, dsn)
			}
			tt.checkDB(t, dsn)
		})
	}
}

// TestSharedServers checks what Redis, Postgres and MySQL return answers; with
// ONCEGATE_TEST_FORCE_PRIVATE=1 it also checks they are private servers.
func TestSharedServers(t *testing.T) {
	force := truthy(os.Getenv(envForcePrivate))
	check := func(t *testing.T, r *resolver, dsn string, ping func(*testing.T)) {
		t.Logf("%s from %s: %s", r.name, r.source, redact(dsn))
		if force && (r.source != "private" || dsn == r.defaultDSN) {
			t.Fatalf("%s is set but %s came from %s (%s)", envForcePrivate, r.name, r.source, dsn)
		}
		ping(t)
	}
	t.Run("Redis", func(t *testing.T) {
		addr := Redis(t)
		check(t, redisKind, addr, func(t *testing.T) {
			if err := redisClient(t, addr).Ping(context.Background()).Err(); err != nil {
				t.Fatalf("PING %s: %v", addr, err)
			}
		})
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		dsn := Postgres(t)
		check(t, postgresKind, dsn, func(t *testing.T) { countPG(t, dsn, "SELECT 1") })
	})
	t.Run("MySQL", func(t *testing.T) {
		dsn := MySQL(t)
		check(t, mysqlKind, dsn, func(t *testing.T) { countMySQL(t, dsn, "SELECT 1") })
		u := MySQLURL(t)
		if back, err := mysqlDriverDSN(u); err != nil || back != dsn {
			t.Fatalf("MySQLURL() = %q reads back as %q (err %v), want %q", u, back, err, dsn)
		}
	})
}

// TestServerDiesWithTestBinary kills a test binary holding a private Redis and checks
// the server dies with it and its directory is swept afterwards.
func TestServerDiesWithTestBinary(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("helper: %v", err)
	}
	fields := strings.Fields(line)
	if len(fields) != 2 {
		_ = cmd.Process.Kill()
		t.Fatalf("helper said %q, want \"addr dir\"", line)
	}
	addr, dir := fields[0], fields[1]
	if err := probe(pingRedis, addr); err != nil {
		t.Fatalf("PING helper's Redis: %v", err)
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for probe(pingRedis, addr) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the private Redis still answers 10s after its test binary was killed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	sweepStaleDirs()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dir %s of the dead binary after sweep: stat err = %v, want not exist", dir, err)
	}
}
