package testenv

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		runHelper()
		return
	}
	Main(m)
}

// redisClient returns a client for addr that fails fast, closed when the test ends.
func redisClient(t *testing.T, addr string) *goredis.Client {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{
		Addr: addr, DialTimeout: time.Second, ReadTimeout: 500 * time.Millisecond,
		MaxRetries: -1, DisableIdentity: true,
	})
	t.Cleanup(func() { c.Close() })
	return c
}

func pingWithin(s *Server, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return s.flavor.ping(ctx, s)
}

func TestPrivateRedisLifecycle(t *testing.T) {
	s := PrivateRedis(t)
	if s.Addr() == redisKind.defaultDSN {
		t.Fatalf("private Redis on the default address %s", s.Addr())
	}
	ctx := context.Background()
	c := redisClient(t, s.Addr())
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}

	s.Restart(t)
	if !s.Running() {
		t.Fatal("Running() = false after Restart")
	}
	if err := c.Get(ctx, "k").Err(); !errors.Is(err, goredis.Nil) {
		t.Fatalf("GET after Restart: err = %v, want redis.Nil (a restarted Redis is empty)", err)
	}

	s.Pause(t)
	if err := pingWithin(s, 300*time.Millisecond); err == nil {
		t.Fatal("PING answered while paused")
	}
	s.Resume(t)
	if err := pingWithin(s, 5*time.Second); err != nil {
		t.Fatalf("PING after Resume: %v", err)
	}

	s.Stop(t)
	if s.Running() {
		t.Fatal("Running() = true after Stop")
	}
	if err := pingWithin(s, time.Second); err == nil {
		t.Fatal("PING answered after Stop")
	}
	s.Stop(t) // a second Stop does nothing
	s.Start(t)
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after Start: %v", err)
	}

	s.Kill(t)
	if err := pingWithin(s, time.Second); err == nil {
		t.Fatal("PING answered after Kill")
	}
}

func TestStartAfterCrash(t *testing.T) {
	s := PrivateRedis(t)
	if err := redisClient(t, s.Addr()).Do(context.Background(), "SHUTDOWN", "NOSAVE").Err(); err == nil {
		t.Fatal("SHUTDOWN returned no error; want the connection to drop")
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.Running() {
		if time.Now().After(deadline) {
			t.Fatal("Running() = true 10s after the server exited")
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Start(t)
	if err := pingWithin(s, 5*time.Second); err != nil {
		t.Fatalf("PING after Start: %v", err)
	}
}

func TestStopResumesPausedServer(t *testing.T) {
	s := PrivateRedis(t)
	s.Pause(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Stop(t)
	}()
	select {
	case <-done:
	case <-time.After(stopTimeout / 2):
		t.Fatal("Stop of a paused server waited for the kill timeout")
	}
	s.Start(t)
}

func TestCloseRemovesDirAndProcess(t *testing.T) {
	s, err := newRedisServer()
	if err != nil {
		unavailable(t, "Redis", false, err)
	}
	registerShared(s)
	pid := s.proc.cmd.Process.Pid
	stopShared()
	if _, err := os.Stat(s.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dir %s after stopShared: stat err = %v, want not exist", s.Dir(), err)
	}
	if processAlive(pid) {
		t.Fatalf("server pid %d alive after stopShared", pid)
	}
	if err := s.start(); !errors.Is(err, errClosed) {
		t.Fatalf("start after close: err = %v, want errClosed", err)
	}
}

func TestPrivatePostgresKeepsData(t *testing.T) {
	s := PrivatePostgres(t)
	want := postgresDSN(s.Port(), "test")
	if s.DSN() != want {
		t.Fatalf("DSN() = %q, want %q", s.DSN(), want)
	}
	execPG(t, s.DSN(), "CREATE TABLE kept (id int)", "INSERT INTO kept VALUES (1)")
	s.Restart(t)
	if n := countPG(t, s.DSN(), "SELECT count(*) FROM kept"); n != 1 {
		t.Fatalf("rows after Restart = %d, want 1", n)
	}
	execPG(t, s.DSN(), "INSERT INTO kept VALUES (2)")
	s.Kill(t)
	if err := pingWithin(s, time.Second); err == nil {
		t.Fatal("SELECT 1 answered after Kill")
	}
	s.Start(t)
	if n := countPG(t, s.DSN(), "SELECT count(*) FROM kept"); n != 2 {
		t.Fatalf("rows after Kill and Start = %d, want 2 (a commit survives a killed server)", n)
	}
}

// TestPrivatePostgresPause checks Pause freezes the backends too: PostgreSQL's
// backends leave the postmaster's process group, so a group signal alone would not.
func TestPrivatePostgresPause(t *testing.T) {
	s := PrivatePostgres(t)
	ctx := testCtx(t)
	conn, err := pgx.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	s.Pause(t)
	qctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = conn.Exec(qctx, "SELECT 1")
	cancel()
	if err == nil {
		t.Fatal("an open connection answered while the server was paused")
	}
	s.Resume(t)
	if n := countPG(t, s.DSN(), "SELECT 1"); n != 1 {
		t.Fatalf("SELECT 1 after Resume = %d", n)
	}
}

func TestPrivateMySQLKeepsData(t *testing.T) {
	s := PrivateMySQL(t)
	if want := "root@tcp(" + s.Addr() + ")/test"; s.DSN() != want {
		t.Fatalf("DSN() = %q, want %q", s.DSN(), want)
	}
	execMySQL(t, s.DSN(), "CREATE TABLE kept (id int)", "INSERT INTO kept VALUES (1)")
	s.Kill(t)
	s.Start(t)
	if n := countMySQL(t, s.DSN(), "SELECT count(*) FROM kept"); n != 1 {
		t.Fatalf("rows after Kill and Start = %d, want 1 (a commit survives a killed server)", n)
	}
}
