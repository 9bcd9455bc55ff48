package dlock

import (
	"context"
	"fmt"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// Lock is one acquisition of a key. Its Token is the fencing token: pass it with
// every write the lock guards (see runtime/fencedsink), so a holder whose lease
// lapsed while it was paused cannot overwrite a newer holder's work. A Lock's
// methods are safe for concurrent use.
type Lock struct {
	c           *Client
	key         string
	storeKey    string
	owner       string
	token       int64
	leaseExpiry time.Time
	// confirmed is when (on this machine's monotonic clock) the claim call that
	// won was sent: the lease lasts at least until confirmed + Lease.
	confirmed time.Time
}

// Key returns the key as given to Acquire.
func (l *Lock) Key() string { return l.key }

// StoreKey returns the namespaced key the lock's record is stored under.
func (l *Lock) StoreKey() string { return l.storeKey }

// Token returns the fencing token: the record's fence at acquisition, from 1 to
// gate.MaxFence. Renewals keep it; a later acquisition of the key gets a higher
// one.
func (l *Lock) Token() int64 { return l.token }

// Owner returns who holds the lock.
func (l *Lock) Owner() string { return l.owner }

// LeaseExpiry returns the lease's end at acquisition, on the store's clock.
// Renewals move the stored lease but not this value.
func (l *Lock) LeaseExpiry() time.Time { return l.leaseExpiry }

// Renew resets the lease to one Lease from now on the store's clock, token
// unchanged. A lapsed lease that no one took meanwhile is renewed. It returns an
// error matching gate.ErrLeaseLost when the lock was released or another holder
// took the key (or advanced its fence), or the store's error.
func (l *Lock) Renew(ctx context.Context) error {
	ok, err := l.c.b.Renew(ctx, l.storeKey, l.token, l.c.opts.Lease, l.c.opts.TTL)
	if err != nil {
		return fmt.Errorf("renew %q (token %d): %w", l.storeKey, l.token, err)
	}
	if !ok {
		return l.lost("renewal refused")
	}
	return nil
}

// lost returns an error matching gate.ErrLeaseLost.
func (l *Lock) lost(what string) error {
	return fmt.Errorf("%w: %s for key %q (token %d): the lock was released, or another holder took the key or advanced its fence",
		gate.ErrLeaseLost, what, l.storeKey, l.token)
}

// Release releases the lock so the key can be acquired at once, with a higher
// token. It reports false when the lock was no longer this holder's: released
// already, or taken by another holder after the lease lapsed (whatever this
// holder wrote after that may have been fenced out). A lapsed lease that no one
// took still releases and reports true. Releasing the token gate.MaxFence
// returns an error matching gate.ErrFenceExhausted; the lease then lapses on its
// own.
func (l *Lock) Release(ctx context.Context) (bool, error) {
	ok, err := l.c.b.Release(ctx, l.storeKey, l.token)
	if err != nil {
		return false, fmt.Errorf("release %q (token %d): %w", l.storeKey, l.token, err)
	}
	return ok, nil
}
