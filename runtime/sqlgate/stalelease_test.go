package sqlgate_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// TestFreshClaimAfterRolledBackHolder: a fresh key held by an uncommitted
// in-transaction claim makes a plain claim wait on the uncommitted row; when
// that transaction rolls back, the waiting claim inserts a fresh record. Its
// lease must run from the clock after the wait: computed before it (the
// INSERT's VALUES), it is short by the whole wait, and an immediate retry by
// another instance could take the key over while the first body runs.
func TestFreshClaimAfterRolledBackHolder(t *testing.T) {
	const (
		lease = 3 * time.Second
		hold  = 1200 * time.Millisecond
		slack = 300 * time.Millisecond // clock granularity and a loaded machine
	)
	for _, d := range []sqlgate.Dialect{sqlgate.Postgres, sqlgate.MySQL} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := openDB(t, d, nil)
			s := newStore(t, db, d)
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback() }()
			if err := s.InTx(ctx, tx, "k", nil, func(*sql.Tx, gate.Claim) error { return nil }); err != nil {
				t.Fatalf("InTx: %v", err)
			}
			type answer struct {
				res      gate.ClaimResult
				err      error
				returned time.Time
			}
			got := make(chan answer, 1)
			go func() {
				res, err := s.Claim(ctx, gate.ClaimRequest{Key: "k", Token: newToken(), Owner: "waiter", Lease: lease, TTL: time.Hour})
				got <- answer{res, err, time.Now()}
			}()
			select {
			case a := <-got:
				t.Fatalf("claim returned %v, %v while the holder's row was uncommitted; the test needs it to wait", a.res.Status, a.err)
			case <-time.After(hold):
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			a := <-got
			if a.err != nil || a.res.Status != gate.Won || a.res.Record.Fence != 1 {
				t.Fatalf("claim after the rollback = %v (fence %d), %v; want won at fence 1", a.res.Status, a.res.Record.Fence, a.err)
			}
			if floor := a.returned.Add(lease - slack); a.res.Record.LeaseExpiry.Before(floor) {
				t.Fatalf("lease_expiry %s is %s short of the claim's return + lease: the lease was computed before the wait",
					a.res.Record.LeaseExpiry.Format(time.RFC3339Nano), a.returned.Add(lease).Sub(a.res.Record.LeaseExpiry))
			}
			stored := inspect(t, s, "k")
			if !stored.LeaseExpiry.Equal(a.res.Record.LeaseExpiry) || !stored.ExpiresAt.Equal(a.res.Record.ExpiresAt) {
				t.Fatalf("stored record %+v differs from the claim's %+v", stored, a.res.Record)
			}
			res, err := s.Claim(ctx, gate.ClaimRequest{Key: "k", Token: newToken(), Owner: "other", Lease: lease, TTL: time.Hour})
			if err != nil || res.Status != gate.HeldByOther {
				t.Fatalf("claim right after = %v, %v; want held-by-other", res.Status, err)
			}
		})
	}
}

// inspect reads key's record and fails the test when it is absent.
func inspect(t *testing.T, s *sqlgate.Store, key string) gate.Record {
	t.Helper()
	rec, ok, err := s.Inspect(context.Background(), key)
	if err != nil || !ok {
		t.Fatalf("Inspect(%q) = %v, %v", key, ok, err)
	}
	return rec
}
