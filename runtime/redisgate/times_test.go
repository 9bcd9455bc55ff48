package redisgate_test

import (
	"context"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// TestLeaseSurvivesRewrites: a record's times count back from its key's expiry,
// so every script that moves the expiry must move them too. The claim's
// lease_expiry survives a completion (with a TTL shorter or longer than the lease),
// a renewal that leaves the expiry, a mark unknown (whose times become absolute)
// and a resolve.
func TestLeaseSurvivesRewrites(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	const slack = 2 * time.Millisecond // the scripts' clock reads are a few µs apart
	near := func(t *testing.T, what string, got, want time.Time) {
		t.Helper()
		if d := got.Sub(want); d < -slack || d > slack {
			t.Fatalf("%s = %v, want %v", what, got, want)
		}
	}
	inspect := func(t *testing.T, key string) gate.Record {
		t.Helper()
		rec, ok, err := s.Inspect(ctx, key)
		if err != nil || !ok {
			t.Fatalf("Inspect = %v, %v", ok, err)
		}
		return rec
	}
	for _, ttl := range []time.Duration{time.Second, time.Hour} {
		t.Run("complete with TTL "+ttl.String(), func(t *testing.T) {
			key := "complete-" + ttl.String()
			won := mustClaim(t, s, key, time.Minute, gate.Won)
			if ok, err := s.Complete(ctx, gate.Completion{Key: key, Fence: won.Fence, TTL: ttl}); err != nil || !ok {
				t.Fatalf("Complete = %v, %v", ok, err)
			}
			rec := inspect(t, key)
			if !rec.LeaseExpiry.IsZero() {
				t.Fatalf("lease_expiry after Complete = %v; a finished record keeps none", rec.LeaseExpiry)
			}
			near(t, "expires_at after Complete", rec.ExpiresAt, rec.DoneAt.Add(ttl))
		})
	}
	t.Run("renew within the expiry, mark unknown, resolve", func(t *testing.T) {
		won := mustClaim(t, s, "k", time.Minute, gate.Won) // expires an hour after the lease
		if ok, err := s.Renew(ctx, "k", won.Fence, 2*time.Minute, time.Second); err != nil || !ok {
			t.Fatalf("Renew = %v, %v", ok, err)
		}
		renewed := inspect(t, "k")
		near(t, "expires_at after a renewal that ends before it", renewed.ExpiresAt, won.ExpiresAt)
		// The renewal came some time after the claim: its lease ends at least a
		// minute after the claim's.
		if lo, hi := won.LeaseExpiry.Add(time.Minute), won.LeaseExpiry.Add(time.Minute+10*time.Second); renewed.LeaseExpiry.Before(lo.Add(-slack)) || renewed.LeaseExpiry.After(hi) {
			t.Fatalf("lease_expiry after Renew = %v, want within [%v, %v]", renewed.LeaseExpiry, lo, hi)
		}
		if ok, err := s.MarkUnknown(ctx, "k", won.Fence); err != nil || !ok {
			t.Fatalf("MarkUnknown = %v, %v", ok, err)
		}
		unknown := inspect(t, "k")
		if !unknown.ExpiresAt.IsZero() {
			t.Fatalf("unknown record expires at %v", unknown.ExpiresAt)
		}
		near(t, "lease_expiry after MarkUnknown", unknown.LeaseExpiry, renewed.LeaseExpiry)
		if err := s.Resolve(ctx, "k", true, time.Hour); err != nil {
			t.Fatalf("Resolve: %v", err)
		}
		done := inspect(t, "k")
		near(t, "lease_expiry after Resolve", done.LeaseExpiry, renewed.LeaseExpiry)
		near(t, "expires_at after Resolve", done.ExpiresAt, done.DoneAt.Add(time.Hour))
	})
}
