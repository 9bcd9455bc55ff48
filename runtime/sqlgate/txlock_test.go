package sqlgate_test

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// begin starts a transaction on s's pool, rolled back when the test ends if
// still open.
func begin(t *testing.T, s *sqlgate.Store) *sql.Tx {
	t.Helper()
	tx, err := s.DB().BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

// TestLockTxHoldsUntilTransactionEnds: a second transaction cannot take a held
// lock (TryLockTx says so with its transaction still usable; LockTx waits) until
// the holder commits, rolls back, or its connection dies. On PostgreSQL and MySQL
// another key is free meanwhile; on SQLite the lock is the database's.
func TestLockTxHoldsUntilTransactionEnds(t *testing.T) {
	ends := []struct {
		name string
		end  func(t *testing.T, s *sqlgate.Store, tx *sql.Tx)
	}{
		{"commit", func(t *testing.T, _ *sqlgate.Store, tx *sql.Tx) {
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		}},
		{"rollback", func(t *testing.T, _ *sqlgate.Store, tx *sql.Tx) {
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
		}},
		{"killed connection", func(t *testing.T, s *sqlgate.Store, tx *sql.Tx) {
			killBackend(t, s, backendID(t, s.Dialect(), tx))
		}},
	}
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		s := newStore(t, openDB(t, d, nil), d)
		for _, end := range ends {
			if d == sqlgate.SQLite && end.name == "killed connection" {
				continue // no server connection; TestKilledConnectionLeavesNothing kills a process
			}
			key := "lock-" + end.name
			holder := begin(t, s)
			if err := s.LockTx(ctx, holder, key); err != nil {
				t.Fatalf("%s: LockTx: %v", end.name, err)
			}
			if got, err := s.TryLockTx(ctx, holder, key); err != nil || !got {
				t.Fatalf("%s: the holder's own TryLockTx = %v, %v; want true (re-entrant)", end.name, got, err)
			}
			other := begin(t, s)
			if got, err := s.TryLockTx(ctx, other, key); err != nil || got {
				t.Fatalf("%s: TryLockTx on a held lock = %v, %v; want false", end.name, got, err)
			}
			var one int
			if err := other.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
				t.Fatalf("%s: transaction unusable after TryLockTx said false: %v", end.name, err)
			}
			free, err := s.TryLockTx(ctx, other, key+"-other")
			if err != nil || free != (d != sqlgate.SQLite) {
				t.Fatalf("%s: TryLockTx on another key = %v, %v; want %v", end.name, free, err, d != sqlgate.SQLite)
			}
			got := make(chan error, 1)
			go func() { got <- s.LockTx(ctx, other, key) }()
			select {
			case err := <-got:
				t.Fatalf("%s: LockTx on a held lock returned %v; want it to wait", end.name, err)
			case <-time.After(stillWaiting):
			}
			end.end(t, s, holder)
			if err := <-got; err != nil {
				t.Fatalf("%s: LockTx after the holder ended: %v", end.name, err)
			}
			if err := other.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		if _, found, err := s.Inspect(ctx, "lock-commit"); err != nil || found {
			t.Errorf("Inspect of a locked key = %v, %v; a lock must record nothing about the key", found, err)
		}
	})
}

// TestRunLockedSerializes runs four workers, each taking a key's lock five
// times for a read-modify-write of a counter row with a pause in between: no two
// ever overlap (an in-process counter of workers inside says so), and no update
// is lost. NoWait reports in-progress while the lock is held.
func TestRunLockedSerializes(t *testing.T) {
	const workers, rounds = 4, 5
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		s := newStore(t, openDB(t, d, nil), d)
		e := newEffects(t, s)
		if _, err := s.DB().Exec(`INSERT INTO ` + e.table + ` (id, fence) VALUES ('counter', 0)`); err != nil {
			t.Fatal(err)
		}
		var inside, overlaps atomic.Int32
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for range rounds {
					err := s.RunLocked(ctx, "counter", &sqlgate.TxOptions{Namespace: "jobs"}, func(tx *sql.Tx) error {
						if inside.Add(1) != 1 {
							overlaps.Add(1)
						}
						defer inside.Add(-1)
						var n int64
						if err := tx.QueryRow(`SELECT fence FROM ` + e.table + ` WHERE id = 'counter'`).Scan(&n); err != nil {
							return err
						}
						time.Sleep(2 * time.Millisecond) // widen the window an unlocked run would race in
						_, err := tx.Exec(`UPDATE `+e.table+` SET fence = `+ph(d, 1)+` WHERE id = 'counter'`, n+1)
						return err
					})
					if err != nil {
						t.Errorf("RunLocked: %v", err)
					}
				}
			})
		}
		wg.Wait()
		var n int
		if err := s.DB().QueryRow(`SELECT fence FROM ` + e.table + ` WHERE id = 'counter'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if overlaps.Load() != 0 || n != workers*rounds {
			t.Fatalf("overlaps = %d, counter = %d; want 0 and %d", overlaps.Load(), n, workers*rounds)
		}

		holder := begin(t, s)
		if err := s.LockTx(ctx, holder, "jobs:counter"); err != nil {
			t.Fatal(err)
		}
		err := s.RunLocked(ctx, "counter", &sqlgate.TxOptions{Namespace: "jobs", NoWait: true}, func(*sql.Tx) error {
			t.Error("RunLocked with NoWait ran while the lock was held")
			return nil
		})
		if !errors.Is(err, gate.ErrInProgress) {
			t.Fatalf("RunLocked with NoWait on a held lock: %v, want ErrInProgress", err)
		}
	})
}

// TestTxLockIDIsTheDocumentedHash: TxLockID is the documented SQL expression,
// and a lock another program takes with it excludes LockTx.
func TestTxLockIDIsTheDocumentedHash(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, openDB(t, sqlgate.Postgres, nil), sqlgate.Postgres)
	const expr = `('x' || left(encode(sha256(convert_to('oncegate/txlock/v1:' || $1 || ':' || $2, 'UTF8')), 'hex'), 16))::bit(64)::bigint`
	for _, key := range []string{"k", "tenant:order-7", "ключ", "a:b\\:c", ""} {
		var id int64
		if err := s.DB().QueryRow(`SELECT `+expr, s.Table(), key).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if id != s.TxLockID(key) {
			t.Errorf("key %q: SQL gives %d, TxLockID %d", key, id, s.TxLockID(key))
		}
	}
	other := begin(t, s)
	if _, err := other.Exec(`SELECT pg_advisory_xact_lock(`+expr+`)`, s.Table(), "k"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.TryLockTx(ctx, begin(t, s), "k"); err != nil || got {
		t.Fatalf("TryLockTx while another program holds the documented lock = %v, %v; want false", got, err)
	}
}

// TestLockTxAndInTxAreIndependent: the lock of a key and an in-transaction
// claim of the same key do not exclude each other.
func TestLockTxAndInTxAreIndependent(t *testing.T) {
	for _, d := range []sqlgate.Dialect{sqlgate.Postgres, sqlgate.MySQL} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := newStore(t, openDB(t, d, nil), d)
			holder := begin(t, s)
			if err := s.LockTx(ctx, holder, "k"); err != nil {
				t.Fatal(err)
			}
			if err := s.RunTx(ctx, "k", &sqlgate.TxOptions{NoWait: true}, func(*sql.Tx, gate.Claim) error { return nil }); err != nil {
				t.Fatalf("RunTx on a locked key: %v", err)
			}
		})
	}
}
