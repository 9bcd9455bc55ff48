package datastoregate

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"github.com/oncegate/oncegate/internal/dsfake"
	"github.com/oncegate/oncegate/runtime/gate"
)

// TestPurgeSkipsReclaimed: a key the expiry query returned but that was reclaimed
// before the delete transaction read it survives.
func TestPurgeSkipsReclaimed(t *testing.T) {
	srv := dsfake.Start(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := New(srv.Client(t, ""), &Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, k := range []string{"stale", "reclaimed"} {
		if _, err := s.Claim(ctx, gate.ClaimRequest{Key: k, Token: k, Lease: time.Second, TTL: time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(time.Minute) // both expired: the query would return both
	keys := []*datastore.Key{s.dsKey("stale"), s.dsKey("reclaimed")}
	if res, err := s.Claim(ctx, gate.ClaimRequest{Key: "reclaimed", Token: "new", Lease: time.Hour, TTL: time.Hour}); err != nil || res.Status != gate.Won {
		t.Fatal(res.Status, err)
	}
	n, retry, err := s.purgeOnce(ctx, keys, map[string]bool{})
	if err != nil || retry || n != 1 {
		t.Fatalf("purgeOnce = %d, %v, %v; want 1 deleted", n, retry, err)
	}
	if r, ok, err := s.Inspect(ctx, "reclaimed"); err != nil || !ok || r.ClaimToken != "new" {
		t.Fatalf("reclaimed record = %+v, %v, %v; want it kept", r, ok, err)
	}
	if _, ok, _ := s.Inspect(ctx, "stale"); ok {
		t.Fatal("stale record kept")
	}
}
