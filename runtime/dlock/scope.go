package dlock

import (
	"context"
	"errors"
	"fmt"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/internal/lease"
)

// ScopeFunc is the work a scope guards. ctx is cancelled with a cause matching
// gate.ErrLeaseLost the moment the lock is lost (read it with context.Cause);
// token is the lock's fencing token, to pass with every guarded write.
type ScopeFunc func(ctx context.Context, token int64) error

// Do acquires key once for Options.Owner, runs fn while renewing the lease every
// RenewInterval, and releases the lock when fn returns (or panics). It returns
// fn's error, or:
//   - an error matching ErrLocked in a *gate.RecordError (fn did not run), or
//     Acquire's other errors;
//   - an error matching gate.ErrLeaseLost when a renewal was refused, or none
//     succeeded in time to keep the lease, while fn ran (fn's own error is kept
//     in the chain);
//   - an error matching gate.ErrFencedOut when the final release was refused
//     because another holder took the key while fn ran.
func (c *Client) Do(ctx context.Context, key string, fn ScopeFunc) error {
	l, err := c.Acquire(ctx, key, "")
	if err != nil {
		return err
	}
	return l.Scope(ctx, fn)
}

// Scope runs fn while renewing l every RenewInterval, then releases l, as Do
// does; it returns Do's errors after acquisition. fn's context is derived from
// ctx. A renewal that fails without an answer is retried at the next interval;
// when the next one would come after the lease (as last confirmed, measured on
// this machine's monotonic clock from when that renewal was sent) may have
// lapsed, fn's context is cancelled with gate.ErrLeaseLost instead. Each
// renewal call is bounded by the time left on the lease as last confirmed. A
// release that fails without an answer is logged, and the lease lapses on its
// own.
func (l *Lock) Scope(ctx context.Context, fn ScopeFunc) error {
	fctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := l.keepAlive(fctx, cancel)
	panicked := true
	defer func() {
		if panicked {
			stop()
			_, _ = l.releaseAfter(ctx)
		}
	}()
	fnErr := fn(fctx, l.token)
	panicked = false
	stop()
	cause := context.Cause(fctx)
	released, relErr := l.releaseAfter(ctx)
	switch {
	case errors.Is(cause, gate.ErrLeaseLost):
		if fnErr == nil || errors.Is(fnErr, gate.ErrLeaseLost) {
			return cause
		}
		return fmt.Errorf("%w (fn returned: %w)", cause, fnErr)
	case relErr == nil && !released:
		err := fmt.Errorf("%w: release of %q (token %d) refused: another holder took the key while fn ran", gate.ErrFencedOut, l.storeKey, l.token)
		if fnErr != nil {
			return fmt.Errorf("%w (fn returned: %w)", err, fnErr)
		}
		return err
	}
	return fnErr
}

// releaseAfter releases l under StoreTimeout, even when ctx is cancelled.
func (l *Lock) releaseAfter(ctx context.Context) (bool, error) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.c.opts.StoreTimeout)
	defer cancel()
	ok, err := l.Release(sctx)
	if err != nil {
		l.c.opts.Logger.Warn("oncegate: lock release after scope failed; the lease will lapse", "key", l.storeKey, "token", l.token, "err", err)
	}
	return ok, err
}

// keepAlive renews l every RenewInterval until stop is called or ctx is done,
// with the loop the gate's heartbeat shares (runtime/internal/lease). It
// cancels ctx with a cause matching gate.ErrLeaseLost when a renewal is refused,
// or when the lease as last confirmed may lapse before the next attempt.
func (l *Lock) keepAlive(ctx context.Context, cancel context.CancelCauseFunc) (stop func()) {
	o := l.c.opts
	return lease.Keeper{
		Renew: func(ctx context.Context) (bool, error) {
			return l.c.b.Renew(ctx, l.storeKey, l.token, o.Lease, o.TTL)
		},
		Interval:  o.RenewInterval,
		Lease:     o.Lease,
		Timeout:   o.StoreTimeout,
		Confirmed: l.confirmed,
		Lost:      l.lost,
		Logger:    o.Logger.With("key", l.storeKey, "token", l.token),
	}.Start(ctx, cancel)
}
