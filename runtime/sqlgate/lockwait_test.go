package sqlgate_test

import (
	"context"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// TestClaimAfterLockWaitIsNotExpired holds a lock on a lapsed record in another
// transaction (a row lock on PostgreSQL and MySQL, the database write lock on
// SQLite) for longer than the claim's lease, then lets the claim through. The
// claim must judge and set the lease on the clock after the wait: had it read the
// clock before waiting (PostgreSQL's now() or statement_timestamp(), a MySQL
// locking SELECT's NOW()), it would commit a lease that had already run out.
func TestClaimAfterLockWaitIsNotExpired(t *testing.T) {
	const (
		lease = 400 * time.Millisecond
		wait  = 2 * lease
	)
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		s := newStore(t, openDB(t, d, nil), d)
		first := claim(t, s, "k", 0) // a lapsed claim: the next claim reclaims it

		release := holdLock(t, d, s, "k")
		type answer struct {
			res gate.ClaimResult
			err error
		}
		got := make(chan answer, 1)
		go func() {
			res, err := s.Claim(ctx, gate.ClaimRequest{Key: "k", Token: newToken(), Owner: "waiter", Lease: lease, TTL: time.Hour})
			got <- answer{res, err}
		}()
		select {
		case a := <-got:
			t.Fatalf("claim returned %v, %v while the lock was held; the test needs it to wait", a.res.Status, a.err)
		case <-time.After(wait):
		}
		unblocked := time.Now()
		release()
		a := <-got
		if a.err != nil || a.res.Status != gate.Won || a.res.Record.Fence != first.Fence+1 {
			t.Fatalf("claim after the wait = %v (fence %d), %v; want won with fence %d", a.res.Status, a.res.Record.Fence, a.err, first.Fence+1)
		}
		if !a.res.Record.LeaseExpiry.After(unblocked) {
			t.Fatalf("lease_expiry %s is before the lock was released at %s: the claim read the clock before waiting",
				a.res.Record.LeaseExpiry.Format(time.RFC3339Nano), unblocked.UTC().Format(time.RFC3339Nano))
		}
		res, err := s.Claim(ctx, gate.ClaimRequest{Key: "k", Token: newToken(), Owner: "other", Lease: lease, TTL: time.Hour})
		if err != nil || res.Status != gate.HeldByOther {
			t.Fatalf("claim right after = %v, %v; want held-by-other (the waiter's lease must still be live)", res.Status, err)
		}
	})
}

// holdLock takes a lock that blocks a claim of key in another transaction and
// returns the function that commits it.
func holdLock(t *testing.T, d sqlgate.Dialect, s *sqlgate.Store, key string) func() {
	t.Helper()
	ctx := context.Background()
	conn, err := s.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d == sqlgate.SQLite {
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			t.Fatalf("BEGIN IMMEDIATE: %v", err)
		}
		return func() {
			if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
				t.Errorf("COMMIT: %v", err)
			}
			_ = conn.Close()
		}
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A share lock: on MySQL it lets the claim's INSERT and plain SELECT through
	// and blocks its SELECT … FOR UPDATE, the step that must read the clock after
	// the wait; on PostgreSQL it blocks the upsert's DO UPDATE.
	q := `SELECT fence FROM "` + s.Table() + `" WHERE "key" = $1 FOR SHARE`
	if d == sqlgate.MySQL {
		q = "SELECT fence FROM `" + s.Table() + "` WHERE `key` = ? LOCK IN SHARE MODE"
	}
	var fence int64
	if err := tx.QueryRowContext(ctx, q, key).Scan(&fence); err != nil {
		t.Fatalf("lock the row: %v", err)
	}
	return func() {
		if err := tx.Commit(); err != nil {
			t.Errorf("commit: %v", err)
		}
		_ = conn.Close()
	}
}
