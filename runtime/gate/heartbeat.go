package gate

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// startHeartbeat renews cl's lease every Options.Heartbeat until the returned stop
// is called. A refused renewal cancels the body's context with a cause matching
// ErrLeaseLost, and so does a run of failed renewals that would let the lease
// lapse before the next attempt. Leases are counted from when the claim or
// renewal was sent (claimSent for the first), never from when its answer came,
// so a slow answer cannot stretch the lease past the store's.
func (g *Gate) startHeartbeat(ctx context.Context, cancel context.CancelCauseFunc, cl Claim, claimSent time.Time) (stop func()) {
	r := g.b.(Renewer) // New checked the capability.
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(g.opts.Heartbeat)
		defer t.Stop()
		lastOK := claimSent
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			sent := time.Now()
			rctx, rcancel := context.WithTimeout(ctx, g.opts.Heartbeat)
			ok, err := r.Renew(rctx, cl.Key, cl.Fence, g.opts.Lease, g.opts.TTL)
			rcancel()
			switch {
			case err == nil && ok:
				lastOK = sent
			case err == nil:
				cancel(fmt.Errorf("%w: renewal refused for key %q (fence %d): another holder took it", ErrLeaseLost, cl.Key, cl.Fence))
				return
			case time.Since(lastOK)+g.opts.Heartbeat >= g.opts.Lease:
				cancel(fmt.Errorf("%w: no renewal of key %q (fence %d) succeeded; the lease would lapse before the next attempt: %v", ErrLeaseLost, cl.Key, cl.Fence, err))
				return
			default:
				g.opts.Logger.Warn("oncegate: lease renewal failed; retrying", "key", cl.Key, "fence", cl.Fence, "err", err)
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
