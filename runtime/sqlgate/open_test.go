package sqlgate_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// dsnFor returns the DSN in the form ONCEGATE_SQL_DSN takes.
func dsnFor(t *testing.T, d sqlgate.Dialect) string {
	switch d {
	case sqlgate.Postgres:
		return testenv.Postgres(t)
	case sqlgate.MySQL:
		return testenv.MySQLURL(t)
	}
	return "sqlite:" + sqliteFile(t)
}

// TestOpen opens each kind of DSN, creates the schema from several callers at
// once (idempotent and race-free), claims, and closes the pool it made.
func TestOpen(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		table := testenv.UniqueName(t, "open")
		s, err := sqlgate.Open(ctx, dsnFor(t, d), &sqlgate.Options{Table: table})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer s.Close()
		if s.Dialect() != d {
			t.Fatalf("dialect = %s, want %s", s.Dialect(), d)
		}
		t.Cleanup(func() { dropTable(t, openDB(t, d, nil), d, table) })
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if err := s.CreateSchema(ctx); err != nil {
					t.Errorf("concurrent CreateSchema: %v", err)
				}
			})
		}
		wg.Wait()
		if err := s.CreateSchema(ctx); err != nil {
			t.Fatalf("CreateSchema again: %v", err)
		}
		claim(t, s, "k", time.Minute)
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := s.DB().PingContext(ctx); err == nil {
			t.Fatal("pool still open after Close of an opened Store")
		}
	})
}

// TestCloseLeavesCallersPool checks that a Store made by New leaves the pool to
// its owner.
func TestCloseLeavesCallersPool(t *testing.T) {
	db := openDB(t, sqlgate.SQLite, nil)
	s, err := sqlgate.New(db, sqlgate.SQLite, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(); err != nil {
		t.Fatalf("caller's pool closed: %v", err)
	}
}

// TestOpenSQLiteSetsWAL checks the connection settings Open applies to SQLite.
func TestOpenSQLiteSetsWAL(t *testing.T) {
	s, err := sqlgate.Open(context.Background(), "sqlite:"+sqliteFile(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mode string
	var busy int
	if err := s.DB().QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
	if err := s.DB().QueryRow("PRAGMA busy_timeout").Scan(&busy); err != nil || busy < 1000 {
		t.Fatalf("busy_timeout = %d, %v; want ≥ 1000 ms", busy, err)
	}
}
