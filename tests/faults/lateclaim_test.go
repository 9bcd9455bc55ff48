package faults_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
)

// slowAnswers is a backend whose claim answers arrive late: the claim is
// applied at once (the store's lease starts then), and the answer reaches the
// gateway delay later, as over a congested network.
type slowAnswers struct {
	*memgate.Store
	delay time.Duration
}

func (s slowAnswers) Claim(ctx context.Context, req gate.ClaimRequest) (gate.ClaimResult, error) {
	res, err := s.Store.Claim(ctx, req)
	time.Sleep(s.delay)
	return res, err
}

// TestLateClaimAnswerOutlivesLease: the store starts a lease when it applies
// the claim, but the answer may reach the gateway late. The gateway bounds the
// body's deadline by the claim's send time + Lease, so an answer delayed by more
// than lease − work deadline cannot let the body run past its lease while
// another instance takes the key (invariant 1).
// The check: instance A's claim answer comes 1.7 s late (lease 2 s, work
// deadline 1 s); 2.1 s after A's claim, instance B tries the key while A's body,
// still inside its work deadline, runs. B must be told in-progress, or A's body
// must have been stopped by then.
func TestLateClaimAnswerOutlivesLease(t *testing.T) {
	store := memgate.New(nil)
	opts := gate.Options{Namespace: "late", Lease: 2 * time.Second, WorkDeadline: time.Second, TTL: time.Hour, Logger: quietLog}
	a, err := gate.New(slowAnswers{store, 1700 * time.Millisecond}, &opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := gate.New(store, &opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	claimed := time.Now()
	var aRunning, overlap atomic.Bool
	aDone := make(chan error, 1)
	go func() {
		aDone <- a.Lock(ctx, "k", func(ctx context.Context, _ gate.Claim) error {
			aRunning.Store(true)
			defer aRunning.Store(false)
			select { // A's work takes 900 ms, inside its 1 s work deadline
			case <-time.After(900 * time.Millisecond):
			case <-ctx.Done():
			}
			return nil
		})
	}()
	time.Sleep(time.Until(claimed.Add(2100 * time.Millisecond)))
	errB := b.Lock(ctx, "k", func(context.Context, gate.Claim) error {
		overlap.Store(aRunning.Load())
		return nil
	})
	errA := <-aDone
	if !overlap.Load() {
		return // B was refused, or A had stopped: the lease held
	}
	t.Fatalf("B won the key (%v) 2.1 s after A's claim while A's body was still running inside its work deadline; A then got %v: "+
		"the body's deadline must be bounded by the claim's send time + Lease", gate.OutcomeOf(errB), gate.OutcomeOf(errA))
}
