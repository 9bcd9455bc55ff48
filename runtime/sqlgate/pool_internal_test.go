package sqlgate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// TestClaimSlots: claims get all but a quarter of a bounded pool (rounded
// down), and never all of a pool of 2 or more; a pool of one cannot keep one.
func TestClaimSlots(t *testing.T) {
	for _, tt := range []struct{ maxOpen, want int }{
		{1, 1}, {2, 1}, {3, 2}, {4, 3}, {7, 6}, {8, 6}, {16, 12}, {17, 13},
	} {
		if got := cap(claimSlots(tt.maxOpen)); got != tt.want {
			t.Errorf("claimSlots(%d) = %d slots, want %d", tt.maxOpen, got, tt.want)
		}
	}
	if claimSlots(0) != nil {
		t.Error("an unbounded pool got claim slots")
	}
}

// TestClaimsLeaveAReserve: on pools bounded to 2, 3 and 4 connections, with
// every claim slot taken a claim waits (here until its context ends), while a
// complete, the work after a body, still runs at once on the reserved one.
func TestClaimsLeaveAReserve(t *testing.T) {
	for _, n := range []int{2, 3, 4} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { claimsLeaveAReserve(t, n) })
	}
}

func claimsLeaveAReserve(t *testing.T, maxConns int) {
	ctx := context.Background()
	s, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "r.db"), &Options{MaxConns: maxConns})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateSchema(ctx); err != nil {
		t.Fatal(err)
	}
	if got := cap(s.claims); got >= maxConns {
		t.Fatalf("claim slots on a pool of %d = %d, want fewer", maxConns, got)
	}
	res, err := s.Claim(ctx, gate.ClaimRequest{Key: "k", Token: "t", Lease: time.Minute, TTL: time.Hour})
	if err != nil || res.Status != gate.Won {
		t.Fatalf("Claim = %v, %v", res.Status, err)
	}
	for range cap(s.claims) {
		s.claims <- struct{}{} // every claim slot in flight
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := s.Claim(short, gate.ClaimRequest{Key: "k2", Token: "t2", Lease: time.Minute, TTL: time.Hour}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("claim past the slots: err = %v, want it to wait until its context ends", err)
	}
	if ok, err := s.Complete(ctx, gate.Completion{Key: "k", Fence: res.Record.Fence, TTL: time.Hour}); err != nil || !ok {
		t.Fatalf("Complete with every claim slot taken = %v, %v; want it to run on the reserve", ok, err)
	}
	if n := s.DB().Stats().MaxOpenConnections; n != maxConns {
		t.Fatalf("pool bound %d, want %d", n, maxConns)
	}
}
