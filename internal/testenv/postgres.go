package testenv

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// postgresFlavor runs postgres in the foreground, listening on 127.0.0.1 only and on
// no Unix socket. With fsync off a commit survives a killed server but not a machine
// crash: enough for tests, and much faster.
var postgresFlavor = &flavor{
	kind:         "postgres",
	stopSignal:   syscall.SIGINT, // fast shutdown
	startTimeout: 60 * time.Second,
	command: func(s *Server) *exec.Cmd {
		return exec.Command(s.cmd,
			"-D", filepath.Join(s.dir, "data"),
			"-p", strconv.Itoa(s.port),
			"-c", "listen_addresses=127.0.0.1",
			"-c", "unix_socket_directories=",
			"-c", "max_connections=200",
			"-c", "fsync=off",
			"-c", "full_page_writes=off",
		)
	},
	ping: func(ctx context.Context, s *Server) error { return pingPostgres(ctx, postgresDSN(s.port, "postgres")) },
	dsn:  func(s *Server) string { return postgresDSN(s.port, "test") },
}

// postgresKind resolves the PostgreSQL server behind Postgres.
var postgresKind = &resolver{
	name:       "PostgreSQL",
	envVar:     "ONCEGATE_TEST_POSTGRES_DSN",
	defaultDSN: postgresDSN(5432, "test"),
	ping:       pingPostgres,
	private:    newPostgresServer,
}

// Postgres returns a DSN for a PostgreSQL database for the test, such as
// "postgres://postgres@127.0.0.1:5432/test?sslmode=disable": the one in
// ONCEGATE_TEST_POSTGRES_DSN (used as given; any form pgx accepts), else the default
// above if it answers SELECT 1, else a private server shared by the test binary. It
// skips or fails the test as Redis does. Tests share the database: name their tables
// with UniqueName, and never stop the server (use PrivatePostgres).
func Postgres(t testing.TB) string {
	t.Helper()
	return postgresKind.get(t)
}

// PrivatePostgres starts a fresh PostgreSQL server (initdb and postgres) that only this
// test uses, with a database test and a trusted superuser postgres, and stops it and
// removes its data when the test ends. Committed data survives Stop, Kill and Restart
// (not a machine crash: the server does not fsync). It skips or fails the test as
// Redis does when the server cannot be started.
func PrivatePostgres(t testing.TB) *Server {
	t.Helper()
	return privateServer(t, "PostgreSQL", newPostgresServer)
}

// postgresDSN is the URL of database db as the trusted superuser postgres.
func postgresDSN(port int, db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", port, db)
}

// newPostgresServer initializes a cluster and starts it.
func newPostgresServer() (*Server, error) {
	initdb, postgres, err := postgresBinaries()
	if err != nil {
		return nil, err
	}
	cred, err := postgresCredential()
	if err != nil {
		return nil, err
	}
	prepare := func(s *Server) error {
		cmd := exec.Command(initdb, "-D", filepath.Join(s.dir, "data"), "-U", "postgres",
			"-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
		cmd.Dir = s.dir
		runAs(cmd, cred)
		return runLogged(cmd, s.dir, "initdb")
	}
	setup := func(s *Server) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, postgresDSN(s.port, "postgres"))
		if err != nil {
			return fmt.Errorf("postgres setup: %w", err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "CREATE DATABASE test"); err != nil {
			return fmt.Errorf("postgres setup: %w", err)
		}
		return nil
	}
	return launch(postgresFlavor, postgres, cred, prepare, setup)
}

// postgresBinaries finds initdb and postgres in one directory: next to the initdb on
// PATH, else the newest /usr/lib/postgresql/<version>/bin (Debian's layout), else
// /usr/local/pgsql/bin (a source build's default).
func postgresBinaries() (initdb, postgres string, err error) {
	var dirs []string
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			dirs = append(dirs, filepath.Dir(real))
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	versioned, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(versioned, func(a, b string) int { return pgVersion(b) - pgVersion(a) })
	dirs = append(dirs, versioned...)
	dirs = append(dirs, "/usr/local/pgsql/bin")
	for _, d := range dirs {
		i, p := filepath.Join(d, "initdb"), filepath.Join(d, "postgres")
		if isExecutable(i) && isExecutable(p) {
			return i, p, nil
		}
	}
	return "", "", fmt.Errorf("initdb and postgres not found together next to PATH's initdb, in /usr/lib/postgresql/*/bin or /usr/local/pgsql/bin")
}

// pgVersion reads the major version out of /usr/lib/postgresql/<version>/bin.
func pgVersion(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// pingPostgres connects to dsn and runs SELECT 1.
func pingPostgres(ctx context.Context, dsn string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var one int
	return conn.QueryRow(ctx, "SELECT 1").Scan(&one)
}
