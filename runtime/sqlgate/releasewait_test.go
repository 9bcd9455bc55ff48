package sqlgate_test

import (
	"context"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// TestClaimWaitingOnReleaseWins holds a held record's row lock in another
// transaction that then releases the record (what Release writes: fence+1,
// lease_expiry = now, no token) and commits, while a claim waits on the row. The
// claim ends after the release committed, so it must win: a claim that judged
// the released row on a clock read before its wait (MariaDB's INSERT …
// RETURNING NOW() is the statement's start time) sees lease_expiry in its future
// and answers held-by-other.
func TestClaimWaitingOnReleaseWins(t *testing.T) {
	for _, path := range []string{"returning", "two-statement"} {
		t.Run(path, func(t *testing.T) {
			ctx := context.Background()
			d := sqlgate.MySQL
			s := newStore(t, openDB(t, d, nil), d)
			if path == "two-statement" {
				sqlgate.WithoutReturning(s)
			}
			first := claim(t, s, "k", time.Hour) // held

			conn, err := s.DB().Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			tx, err := conn.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback() }()
			var fence int64
			if err := tx.QueryRowContext(ctx, "SELECT fence FROM `"+s.Table()+"` WHERE `key` = ? FOR UPDATE", "k").Scan(&fence); err != nil {
				t.Fatalf("lock the row: %v", err)
			}
			type answer struct {
				res gate.ClaimResult
				err error
			}
			got := make(chan answer, 1)
			go func() {
				res, err := s.Claim(ctx, gate.ClaimRequest{Key: "k", Token: newToken(), Owner: "waiter", Lease: time.Minute, TTL: time.Hour})
				got <- answer{res, err}
			}()
			select {
			case a := <-got:
				t.Fatalf("claim returned %v, %v while the lock was held; the test needs it to wait", a.res.Status, a.err)
			case <-time.After(300 * time.Millisecond):
			}
			if _, err := tx.ExecContext(ctx, "UPDATE `"+s.Table()+"` SET fence = fence + 1, lease_expiry = ?, claim_token = '' WHERE `key` = ? AND fence = ?",
				time.Now().UnixMilli(), "k", first.Fence); err != nil {
				t.Fatalf("release: %v", err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			a := <-got
			if a.err != nil || a.res.Status != gate.Won || a.res.Record.Fence != first.Fence+2 {
				t.Fatalf("claim after the release = %v (fence %d), %v; want won with fence %d", a.res.Status, a.res.Record.Fence, a.err, first.Fence+2)
			}
		})
	}
}
