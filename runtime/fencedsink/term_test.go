package fencedsink_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/oncegate/oncegate/runtime/fencedsink"
)

func TestTermTakesHoldsAndEnds(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, db *sql.DB, d fencedsink.Dialect) {
		ctx := context.Background()
		s := newSink(t, db, d)
		noop := func(context.Context, *sql.Tx) error { return nil }
		a := s.Term("k", 1)
		for i := range 3 { // the first write takes the term, later ones hold it
			if err := a.Write(ctx, db, noop); err != nil {
				t.Fatalf("write %d with token 1: %v", i, err)
			}
		}
		if err := s.Term("k", 1).Write(ctx, db, noop); !errors.Is(err, fencedsink.ErrStaleToken) {
			t.Fatalf("a fresh term for a token that already wrote: err = %v, want ErrStaleToken", err)
		}
		if err := s.Term("k", 2).Write(ctx, db, noop); err != nil {
			t.Fatalf("token 2 takes the term: %v", err)
		}
		ran := false
		err := a.Write(ctx, db, func(context.Context, *sql.Tx) error { ran = true; return nil })
		if !errors.Is(err, fencedsink.ErrStaleToken) || ran || !a.Ended() {
			t.Fatalf("token 1 after token 2: err = %v, ran = %v, ended = %v; want ErrStaleToken, fn not run, ended", err, ran, a.Ended())
		}
		closed, _ := sql.Open("sqlite", "unused")
		_ = closed.Close()
		if err := a.Write(ctx, closed, noop); !errors.Is(err, fencedsink.ErrStaleToken) {
			t.Fatalf("write on an ended term: err = %v, want ErrStaleToken without touching the database", err)
		}
		if err := a.Guard(ctx, closed); !errors.Is(err, fencedsink.ErrStaleToken) {
			t.Fatalf("guard on an ended term: err = %v, want ErrStaleToken", err)
		}
	})
}

func TestTermWriteRollsBackOnFnError(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, db *sql.DB, d fencedsink.Dialect) {
		ctx := context.Background()
		s := newSink(t, db, d)
		boom := errors.New("boom")
		term := s.Term("k", 4)
		if err := term.Write(ctx, db, func(context.Context, *sql.Tx) error { return boom }); !errors.Is(err, boom) {
			t.Fatalf("Write: err = %v, want fn's error", err)
		}
		if f, _ := s.Fence(ctx, db, "k"); f != 0 || term.Ended() {
			t.Fatalf("after a failed write: fence %d, ended %v; want 0 (rolled back), not ended", f, term.Ended())
		}
		if err := term.Write(ctx, db, func(context.Context, *sql.Tx) error { return nil }); err != nil {
			t.Fatalf("Write after a rolled-back take: %v", err)
		}
		if f, _ := s.Fence(ctx, db, "k"); f != 4 {
			t.Fatalf("fence = %d, want 4", f)
		}
		func() {
			defer func() { _ = recover() }()
			_ = term.Write(ctx, db, func(context.Context, *sql.Tx) error { panic("kaboom") })
		}()
		if err := s.Term("k", 5).Write(ctx, db, func(context.Context, *sql.Tx) error { return nil }); err != nil {
			t.Fatalf("Write after a panicking write (its transaction must be rolled back): %v", err)
		}
	})
}

// TestConcurrentHoldersNeverWriteOutOfOrder races holders with different tokens
// on one key. Each logs its token in the data table inside its guarded
// transaction; in commit order the logged tokens never go down, and the newest
// token always gets through.
func TestConcurrentHoldersNeverWriteOutOfOrder(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, db *sql.DB, d fencedsink.Dialect) {
		ctx := context.Background()
		s := newSink(t, db, d)
		idType := "BIGSERIAL PRIMARY KEY"
		if d == fencedsink.SQLite {
			idType = "INTEGER PRIMARY KEY AUTOINCREMENT"
		}
		log := newTable(t, db, "id "+idType+", token BIGINT NOT NULL")
		insert := fmt.Sprintf("INSERT INTO %s (token) VALUES ($1)", log)
		if d == fencedsink.SQLite {
			insert = fmt.Sprintf("INSERT INTO %s (token) VALUES (?1)", log)
		}
		const holders, writes = 12, 5
		warm(t, db, holders)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for _, tok := range rand.Perm(holders) {
			wg.Go(func() {
				<-start
				term := s.Term("k", int64(tok+1))
				for range writes {
					err := term.Write(ctx, db, func(ctx context.Context, tx *sql.Tx) error {
						// A read before the write widens the window in which an
						// unguarded holder would be overtaken.
						var n int64
						if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+log).Scan(&n); err != nil {
							return err
						}
						_, err := tx.ExecContext(ctx, insert, term.Token())
						return err
					})
					if errors.Is(err, fencedsink.ErrStaleToken) {
						return
					}
					if err != nil {
						t.Errorf("token %d: %v", term.Token(), err)
						return
					}
				}
			})
		}
		close(start)
		wg.Wait()
		rows, err := db.QueryContext(ctx, "SELECT token FROM "+log+" ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []int64
		for rows.Next() {
			var tok int64
			if err := rows.Scan(&tok); err != nil {
				t.Fatal(err)
			}
			got = append(got, tok)
		}
		if !slices.IsSorted(got) || len(got) == 0 || got[len(got)-1] != holders {
			t.Fatalf("tokens in commit order = %v; want non-decreasing, ending with %d", got, holders)
		}
		if n := len(got) - slices.Index(got, holders); n != writes {
			t.Fatalf("the newest token wrote %d times, want %d", n, writes)
		}
	})
}

// warm opens n connections and returns them to db's idle pool, so racing
// goroutines do not queue behind connection setup.
func warm(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	db.SetMaxIdleConns(n)
	conns := make([]*sql.Conn, n)
	for i := range conns {
		c, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	for _, c := range conns {
		_ = c.Close()
	}
}
