// Package lease holds what runtime/gate's heartbeat and runtime/dlock's scope
// share: the one loop that keeps a lease alive while work runs, and the one set
// of checks their options apply to durations. It imports nothing from the
// project, so both can import it (gate cannot import dlock, and dlock imports
// gate); see docs/decisions.md, "One renewal loop under the gate and the lock".
package lease

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Keeper renews one lease every Interval while work runs, as etcd's
// concurrency.Session keeps one lease alive under its Mutex and Election. A lease
// is counted from when the call that granted it was sent, never from when its
// answer came, so a slow answer cannot stretch the lease past the store's.
type Keeper struct {
	// Renew makes one renewal of the lease for Lease more. Its ctx is cancelled
	// when the lease as last confirmed may have lapsed, since a later answer is
	// worthless, and when stop is called, since the work is over. It reports false when the store refused (another holder took
	// the key, or its fence moved), and an error when no answer came.
	Renew func(ctx context.Context) (bool, error)
	// Interval is the time between renewals (time.Duration, positive, below
	// Lease).
	Interval time.Duration
	// Lease is how long each confirmed renewal keeps the key (time.Duration),
	// counted from when that renewal was sent.
	Lease time.Duration
	// Timeout, when positive, bounds each renewal call (the store timeout), so a
	// renewal that hangs on a dead connection fails in time for the next one to
	// be tried within the lease (invariant 1 lets one renewal fail). Zero
	// bounds a renewal only by the lease left.
	Timeout time.Duration
	// Confirmed is when (on Now's clock) the call that granted the current lease
	// was sent: the lease lasts at least until Confirmed + Lease.
	Confirmed time.Time
	// Lost builds the cause the work's context is cancelled with when the lease
	// is lost; reason says why. The callers' causes match gate.ErrLeaseLost.
	Lost func(reason string) error
	// Logger receives a warning for each failed renewal that is retried. Nil
	// means slog.Default().
	Logger *slog.Logger
	// Now reads the clock that judges the lease. Nil means time.Now (monotonic).
	Now func() time.Time
	// Tick, when non-nil, replaces the ticker at Interval: each value received
	// starts one renewal. Tests send on it to drive the loop.
	Tick <-chan time.Time
}

// Start renews the lease in a goroutine until stop is called or ctx is done.
// When a renewal is refused, when none has succeeded in time for the next
// attempt to land within the lease, or when the lease may have lapsed before a
// renewal could be sent, it calls cancel with Lost's cause and stops renewing.
// stop cuts a renewal under way (the work is over: its answer no longer
// matters, and a hanging one would hold the caller up to a whole lease) and
// waits for the goroutine to end, so no renewal runs after it returns; call it
// once.
func (k Keeper) Start(ctx context.Context, cancel context.CancelCauseFunc) (stop func()) {
	if k.Now == nil {
		k.Now = time.Now
	}
	if k.Logger == nil {
		k.Logger = slog.Default()
	}
	tick := k.Tick
	var t *time.Ticker
	if tick == nil {
		t = time.NewTicker(k.Interval)
		tick = t.C
	}
	done := make(chan struct{})
	lctx, end := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		if t != nil {
			defer t.Stop()
		}
		if reason := k.run(lctx, done, tick); reason != "" {
			cancel(k.Lost(reason))
		}
	})
	return func() { close(done); end(); wg.Wait() }
}

// run is the loop. It returns why the lease was lost, or "" when stopped.
func (k Keeper) run(ctx context.Context, done <-chan struct{}, tick <-chan time.Time) string {
	confirmed := k.Confirmed
	for {
		select {
		case <-done:
			return ""
		case <-ctx.Done():
			return ""
		case <-tick:
		}
		sent := k.Now()
		left := k.Lease - sent.Sub(confirmed)
		if left <= 0 {
			return fmt.Sprintf("the lease confirmed %s ago lapsed before the next renewal was sent", sent.Sub(confirmed).Round(time.Millisecond))
		}
		if k.Timeout > 0 {
			left = min(left, k.Timeout)
		}
		rctx, rcancel := context.WithTimeout(ctx, left)
		ok, err := k.Renew(rctx)
		rcancel()
		switch {
		case err == nil && ok:
			confirmed = sent
		case err == nil:
			return "renewal refused"
		case ctx.Err() != nil:
			return "" // the work ended; its context says why
		case k.Now().Sub(confirmed)+k.Interval >= k.Lease:
			return fmt.Sprintf("no renewal succeeded since %s ago, and the lease may lapse before the next attempt (last error: %v)",
				k.Now().Sub(confirmed).Round(time.Millisecond), err)
		default:
			k.Logger.Warn("oncegate: lease renewal failed; retrying", "err", err)
		}
	}
}
