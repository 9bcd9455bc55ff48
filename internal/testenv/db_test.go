package testenv

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// helperEnv makes the test binary run runHelper instead of its tests.
const helperEnv = "ONCEGATE_TESTENV_HELPER"

// runHelper starts a private Redis, prints "addr dir" and waits for stdin to close,
// standing in for a test binary that gets killed while its servers run.
func runHelper() {
	s, err := newRedisServer()
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(s.Addr(), s.Dir())
	_, _ = io.Copy(io.Discard, bufio.NewReader(os.Stdin))
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// execPG runs statements on dsn, failing the test on the first error.
func execPG(t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	ctx := testCtx(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// countPG runs a query returning one integer on dsn.
func countPG(t *testing.T, dsn, query string) int {
	t.Helper()
	ctx := testCtx(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// execMySQL runs statements on a driver-form dsn, failing the test on the first error.
func execMySQL(t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	db, err := openMySQL(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.ExecContext(testCtx(t), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// countMySQL runs a query returning one integer on a driver-form dsn.
func countMySQL(t *testing.T, dsn, query string) int {
	t.Helper()
	db, err := openMySQL(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(testCtx(t), query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}
