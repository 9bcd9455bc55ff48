package sqlgate

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// TestClaimsLeaveAReserve: on a pool bounded to 4 connections claims get 3
// slots; with all 3 taken a claim waits (here until its context ends), while a
// complete, the work after a body, still runs at once on the reserved one.
func TestClaimsLeaveAReserve(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "r.db"), &Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateSchema(ctx); err != nil {
		t.Fatal(err)
	}
	if got := cap(s.claims); got != 3 {
		t.Fatalf("claim slots on a pool of 4 = %d, want 3", got)
	}
	res, err := s.Claim(ctx, gate.ClaimRequest{Key: "k", Token: "t", Lease: time.Minute, TTL: time.Hour})
	if err != nil || res.Status != gate.Won {
		t.Fatalf("Claim = %v, %v", res.Status, err)
	}
	for range cap(s.claims) {
		s.claims <- struct{}{} // three claims in flight
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := s.Claim(short, gate.ClaimRequest{Key: "k2", Token: "t2", Lease: time.Minute, TTL: time.Hour}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("claim past the slots: err = %v, want it to wait until its context ends", err)
	}
	if ok, err := s.Complete(ctx, gate.Completion{Key: "k", Fence: res.Record.Fence, TTL: time.Hour}); err != nil || !ok {
		t.Fatalf("Complete with every claim slot taken = %v, %v; want it to run on the reserve", ok, err)
	}
	if n := s.DB().Stats().MaxOpenConnections; n != 4 {
		t.Fatalf("pool bound %d, want 4", n)
	}
}
