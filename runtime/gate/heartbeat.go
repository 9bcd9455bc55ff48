package gate

import (
	"context"
	"fmt"
	"time"

	"github.com/oncegate/oncegate/runtime/internal/lease"
)

// startHeartbeat renews cl's lease every Options.Heartbeat until the returned
// stop is called, with the loop dlock's scopes share (runtime/internal/lease).
// A refused renewal cancels the body's context with a cause matching
// ErrLeaseLost, and so does a run of failed renewals that would let the lease
// lapse before the next attempt. Leases are counted from when the claim or
// renewal was sent (claimSent for the first), never from when its answer came,
// and each renewal is bounded by the time left on the lease.
func (g *Gate) startHeartbeat(ctx context.Context, cancel context.CancelCauseFunc, cl Claim, claimSent time.Time) (stop func()) {
	return lease.Keeper{
		Renew: func(ctx context.Context) (bool, error) {
			return g.b.Renew(ctx, cl.Key, cl.Fence, g.opts.Lease, g.opts.TTL)
		},
		Interval:  g.opts.Heartbeat,
		Lease:     g.opts.Lease,
		Timeout:   g.opts.StoreTimeout,
		Confirmed: claimSent,
		Lost: func(reason string) error {
			return fmt.Errorf("%w: %s for key %q (fence %d): another holder may have taken it", ErrLeaseLost, reason, cl.Key, cl.Fence)
		},
		Logger: g.opts.Logger.With("key", cl.Key, "fence", cl.Fence),
	}.Start(ctx, cancel)
}
