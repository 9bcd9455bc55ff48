package dlock

import (
	"context"
	"fmt"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// Clock is the optional capability of a backend to read the store's clock, so
// lock queries judge leases on the same clock that set them; backends differ
// here (redisgate has one, the others do not). A backend that is not a Clock is
// judged on Options.Now.
type Clock interface {
	// Now returns the store's current time.
	Now(ctx context.Context) (time.Time, error)
}

// Status is what Inspect reads about a lock.
type Status struct {
	// Key is the namespaced store key.
	Key string
	// Locked reports whether a live lease holds the key at Now.
	Locked bool
	// Owner is the holder when Locked, else empty.
	Owner string
	// Remaining is how long the lease has left at Now when Locked, else zero.
	Remaining time.Duration
	// Now is the instant the lease was judged at, read after the record.
	Now time.Time
	// StoreClock reports whether Now came from the backend (a Clock) rather than
	// from Options.Now.
	StoreClock bool
	// Record is the stored record; the zero Record when the key has none (absent
	// or past expires_at). Record.Fence is the holder's token when Locked; every
	// later acquisition gets a higher token.
	Record gate.Record
}

// Inspect reads key's lock without changing it. Leases are judged on the store's
// clock when the backend is a Clock (one more store call), else on Options.Now,
// whose skew against the store shifts Locked and Remaining by the skew.
func (c *Client) Inspect(ctx context.Context, key string) (Status, error) {
	if key == "" {
		return Status{}, fmt.Errorf("inspect: %w: key is empty", gate.ErrInvalidKey)
	}
	st := Status{Key: c.Key(key)}
	rec, found, err := c.b.Inspect(ctx, st.Key)
	if err != nil {
		return Status{}, fmt.Errorf("inspect %q: %w", st.Key, err)
	}
	if clk, ok := c.b.(Clock); ok {
		if st.Now, err = clk.Now(ctx); err != nil {
			return Status{}, fmt.Errorf("inspect %q: store clock: %w", st.Key, err)
		}
		st.StoreClock = true
	} else {
		st.Now = c.opts.Now()
	}
	if !found {
		return st, nil
	}
	st.Record = rec
	if rec.LeaseLive(st.Now) {
		st.Locked, st.Owner, st.Remaining = true, rec.Owner, rec.LeaseExpiry.Sub(st.Now)
	}
	return st, nil
}

// IsLocked reports whether a live lease holds key. See Inspect for the clock and
// the errors.
func (c *Client) IsLocked(ctx context.Context, key string) (bool, error) {
	st, err := c.Inspect(ctx, key)
	return st.Locked, err
}

// Owner returns who holds key, or "" when no live lease does. See Inspect for the
// clock and the errors.
func (c *Client) Owner(ctx context.Context, key string) (string, error) {
	st, err := c.Inspect(ctx, key)
	return st.Owner, err
}

// TTL returns how long key's lease has left, or zero when no live lease holds it.
// See Inspect for the clock and the errors.
func (c *Client) TTL(ctx context.Context, key string) (time.Duration, error) {
	st, err := c.Inspect(ctx, key)
	return st.Remaining, err
}
