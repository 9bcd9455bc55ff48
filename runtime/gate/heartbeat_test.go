package gate_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
)

// These tests use the real clock: the heartbeat is a real ticker.

func TestHeartbeatKeepsLongBodyAlive(t *testing.T) {
	s := memgate.New(nil)
	// A 400 ms lease renewed every 100 ms: only a scheduling stall of about
	// 300 ms (a loaded machine) lets the lease lapse; 100 ms leases did.
	lease := 400 * time.Millisecond
	g, err := gate.New(s, &gate.Options{Lease: lease, Heartbeat: lease / 4, WorkDeadline: 10 * time.Second, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var contenders, stolen atomic.Int32
	err = g.Lock(ctx, "long", func(bctx context.Context, _ gate.Claim) error {
		deadline := time.Now().Add(3 * lease)
		for time.Now().Before(deadline) {
			err := g.Lock(ctx, "long", func(context.Context, gate.Claim) error { stolen.Add(1); return nil })
			if !errors.Is(err, gate.ErrInProgress) {
				t.Errorf("contender: %v, want ErrInProgress", err)
			}
			contenders.Add(1)
			time.Sleep(lease / 16)
		}
		return bctx.Err()
	})
	if err != nil {
		t.Fatalf("long body: %v", err)
	}
	if stolen.Load() != 0 || contenders.Load() < 10 {
		t.Fatalf("stolen = %d after %d contenders; the heartbeat must keep the claim", stolen.Load(), contenders.Load())
	}
}

func TestRefusedRenewalCancelsBodyWithLeaseLost(t *testing.T) {
	b := &flaky{Store: memgate.New(nil), refuseRenew: true}
	g, err := gate.New(b, &gate.Options{Lease: time.Second, Heartbeat: 10 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	var cause error
	err = g.Lock(context.Background(), "k", func(ctx context.Context, _ gate.Claim) error {
		select {
		case <-ctx.Done():
			cause = context.Cause(ctx)
			return ctx.Err()
		case <-time.After(5 * time.Second):
			return errors.New("body was not cancelled")
		}
	})
	if !errors.Is(cause, gate.ErrLeaseLost) {
		t.Fatalf("cause = %v, want ErrLeaseLost", cause)
	}
	if gate.OutcomeOf(err) != gate.OutcomeBodyFailed || b.renews.Load() != 1 {
		t.Fatalf("err = %v, renews = %d; want a body failure after the one refused renewal", err, b.renews.Load())
	}
}

func TestWorkDeadlineBoundsBody(t *testing.T) {
	g, err := gate.New(memgate.New(nil), &gate.Options{Lease: time.Minute, WorkDeadline: 30 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	parent, cancel := context.WithCancel(context.Background())
	cancel() // a disconnected push client must not cut the body
	err = g.Lock(parent, "k", func(ctx context.Context, _ gate.Claim) error {
		d, ok := ctx.Deadline()
		if !ok || time.Until(d) > 30*time.Millisecond {
			t.Errorf("body deadline = %v %v, want within 30ms", d, ok)
		}
		<-ctx.Done()
		return ctx.Err()
	})
	var be *gate.BodyError
	if !errors.As(err, &be) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a *BodyError carrying the body's deadline", err)
	}
}

// hangingRenew is a store whose renewals hang until their context ends (a
// dead connection), and says when one is under way.
type hangingRenew struct {
	*memgate.Store
	renewing chan struct{}
}

func (h *hangingRenew) Renew(ctx context.Context, key string, fence int64, lease, ttl time.Duration) (bool, error) {
	select {
	case h.renewing <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return false, ctx.Err()
}

// TestBodyEndCutsAHangingRenewal: a body that returns while a renewal hangs
// is recorded at once. The heartbeat's stop used to wait for the renewal,
// which is bounded only by the time left on the lease, so the complete came
// up to a whole lease late: past the ack deadline, and after the lease it
// relies on had lapsed.
func TestBodyEndCutsAHangingRenewal(t *testing.T) {
	b := &hangingRenew{Store: memgate.New(nil), renewing: make(chan struct{}, 1)}
	const lease = 30 * time.Second
	g, err := gate.New(b, &gate.Options{Lease: lease, Heartbeat: 20 * time.Millisecond, WorkDeadline: lease - time.Second, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	var returned time.Time
	res := g.Run(context.Background(), gate.VerbLock, "k", func(ctx context.Context, _ gate.Claim) error {
		select {
		case <-b.renewing:
		case <-ctx.Done():
			return errors.New("no renewal was sent")
		}
		returned = time.Now()
		return nil
	})
	// Generous for a loaded machine; the hanging renewal alone takes ~29 s.
	if late := time.Since(returned); res.Outcome != gate.OutcomeRan || late > 10*time.Second {
		t.Fatalf("outcome %v (%v) %s after the body returned; want ran at once, not after the hanging renewal", res.Outcome, res.Err, late.Round(time.Millisecond))
	}
}
