package fencedsink_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/fencedsink"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// database is one SQL database the tests run against.
type database struct {
	name    string
	dialect fencedsink.Dialect
	open    func(t *testing.T) *sql.DB
}

var databases = []database{
	{"postgres", fencedsink.Postgres, openPostgres},
	{"sqlite", fencedsink.SQLite, openSQLite},
}

// forEachDatabase runs test against real PostgreSQL and an SQLite file.
func forEachDatabase(t *testing.T, test func(t *testing.T, db *sql.DB, d fencedsink.Dialect)) {
	for _, d := range databases {
		t.Run(d.name, func(t *testing.T) { test(t, d.open(t), d.dialect) })
	}
}

func openPostgres(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", testenv.Postgres(t))
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func openSQLite(t *testing.T) *sql.DB {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "sink.db") + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// exec runs a statement and fails the test on an error.
func exec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// newTable creates a table named uniquely for the test from the CREATE TABLE
// body cols, dropped when the test ends, and returns its name.
func newTable(t *testing.T, db *sql.DB, cols string) string {
	t.Helper()
	name := testenv.UniqueName(t, "fs")
	exec(t, db, "CREATE TABLE "+name+" ("+cols+")")
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE "+name) })
	return name
}

// newSink returns a Sink over a new dedicated fence table.
func newSink(t *testing.T, db *sql.DB, d fencedsink.Dialect) *fencedsink.Sink {
	t.Helper()
	name := testenv.UniqueName(t, "fs")
	s, err := fencedsink.New(name, &fencedsink.Options{Dialect: d})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := s.CreateTable(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE "+name) })
	return s
}
