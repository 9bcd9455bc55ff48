package dlock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// Client hands out distributed locks over a gate.Backend. Lock records live under
// their own namespace and never complete, so they do not mix with a Gate's
// ledger records. A Client is safe for concurrent use.
type Client struct {
	b    gate.Backend
	opts Options
}

// New returns a Client over b. It returns an error naming the field when opts is
// invalid.
func New(b gate.Backend, opts *Options) (*Client, error) {
	if b == nil {
		return nil, errors.New("dlock.New: backend is nil")
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Client{b: b, opts: o}, nil
}

// Backend returns the Client's backend.
func (c *Client) Backend() gate.Backend { return c.b }

// Options returns the Client's options with defaults applied.
func (c *Client) Options() Options { return c.opts }

// Key returns the store key a lock on key lives under: "<Namespace>:<key>".
func (c *Client) Key(key string) string { return c.opts.Namespace + ":" + key }

func (c *Client) owner(owner string) string {
	if owner == "" {
		return c.opts.Owner
	}
	return owner
}

// Acquire tries once to take key for owner (empty means Options.Owner) for one
// Lease. It returns the Lock, whose Token is the record's fence: above every token
// handed out for key before, so a sink can refuse writes from older holders. It
// does not wait and is not re-entrant: a live lease, even owner's own, is an
// error matching ErrLocked in a *gate.RecordError naming the holder. Other
// errors: gate.ErrInvalidKey, gate.ErrFenceExhausted (the next token would pass
// gate.MaxFence), ErrNotLock, or the store's error; after a store error the claim
// may have been applied, and it lapses after one Lease.
func (c *Client) Acquire(ctx context.Context, key, owner string) (*Lock, error) {
	if key == "" {
		return nil, fmt.Errorf("acquire: %w: key is empty", gate.ErrInvalidKey)
	}
	return c.claim(ctx, key, c.owner(owner), newToken())
}

// AcquireWait takes key for owner like Acquire, retrying every RetryInterval
// while it is held or the store does not answer, until ctx is done. Every attempt
// carries the same claim token, so an attempt whose claim was applied but whose
// answer was lost is recognised by the next one instead of waiting out its own
// lease. It returns Acquire's errors except ErrLocked and store errors; when ctx
// ends first, the error matches ctx.Err() and the last attempt's error (the
// last one that ctx's end did not cut short, such as ErrLocked).
func (c *Client) AcquireWait(ctx context.Context, key, owner string) (*Lock, error) {
	if key == "" {
		return nil, fmt.Errorf("acquire: %w: key is empty", gate.ErrInvalidKey)
	}
	owner, token := c.owner(owner), newToken()
	t := time.NewTimer(c.opts.RetryInterval)
	defer t.Stop()
	var last error // the last attempt's error, unless ctx's end caused it
	for {
		l, err := c.claim(ctx, key, owner, token)
		if ctx.Err() == nil || last == nil {
			last = err
		}
		switch {
		case err == nil:
			return l, nil
		case errors.Is(err, ErrNotLock), errors.Is(err, gate.ErrFenceExhausted), errors.Is(err, gate.ErrKeyReuse):
			return nil, err
		case errors.Is(err, ErrLocked):
		case ctx.Err() == nil:
			c.opts.Logger.Warn("oncegate: lock acquire failed; retrying", "key", c.Key(key), "err", err)
		}
		t.Reset(c.opts.RetryInterval)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("acquire %q: %w; last attempt: %w", c.Key(key), ctx.Err(), last)
		case <-t.C:
		}
	}
}

// claim makes one claim call with token.
func (c *Client) claim(ctx context.Context, key, owner, token string) (*Lock, error) {
	sk := c.Key(key)
	sent := time.Now()
	res, err := c.b.Claim(ctx, gate.ClaimRequest{Key: sk, Token: token, Owner: owner, Lease: c.opts.Lease, TTL: c.opts.TTL})
	if err != nil {
		return nil, fmt.Errorf("acquire %q: %w", sk, err)
	}
	switch res.Status {
	case gate.Won:
		return &Lock{c: c, key: key, storeKey: sk, owner: owner, token: res.Record.Fence,
			leaseExpiry: res.Record.LeaseExpiry, confirmed: sent}, nil
	case gate.HeldByOther:
		return nil, &gate.RecordError{Err: ErrLocked, Record: res.Record}
	case gate.AlreadyDone, gate.Failed, gate.Unknown:
		return nil, &gate.RecordError{Err: ErrNotLock, Record: res.Record}
	}
	return nil, fmt.Errorf("acquire %q: backend answered invalid status %d", sk, res.Status)
}

// Release releases key if owner (empty means Options.Owner) holds it with a live
// lease, and reports whether it did. The next acquirer gets a higher token. It
// reads the record, then releases it by its fence: if another holder took the
// key in between, the fence moved and Release reports false. Liveness is judged
// as Inspect judges it.
func (c *Client) Release(ctx context.Context, key, owner string) (bool, error) {
	rec, held, err := c.heldBy(ctx, key, c.owner(owner))
	if err != nil || !held {
		return false, err
	}
	ok, err := c.b.Release(ctx, rec.Key, rec.Fence)
	if err != nil {
		return false, fmt.Errorf("release %q: %w", rec.Key, err)
	}
	return ok, nil
}

// Renew resets the lease of key to one Lease from now on the store's clock,
// token unchanged, if owner (empty means Options.Owner) holds it with a live
// lease, and reports whether it did. Like Release it is fenced: a holder change
// in between makes it report false.
func (c *Client) Renew(ctx context.Context, key, owner string) (bool, error) {
	rec, held, err := c.heldBy(ctx, key, c.owner(owner))
	if err != nil || !held {
		return false, err
	}
	ok, err := c.b.Renew(ctx, rec.Key, rec.Fence, c.opts.Lease, c.opts.TTL)
	if err != nil {
		return false, fmt.Errorf("renew %q: %w", rec.Key, err)
	}
	return ok, nil
}

// heldBy returns key's record and whether owner holds it with a live lease.
func (c *Client) heldBy(ctx context.Context, key, owner string) (gate.Record, bool, error) {
	st, err := c.Inspect(ctx, key)
	if err != nil {
		return gate.Record{}, false, err
	}
	return st.Record, st.Locked && st.Owner == owner, nil
}

// AdvanceFence raises key's fence to at least atLeast and returns the fence now
// stored; it never lowers it. The next Acquire gets a token above it, and a live
// holder with a lower token can no longer renew or release (its Scope is
// cancelled with gate.ErrLeaseLost). Use it after the store lost data (see the
// package doc's recovery procedure). A negative atLeast is an error; one past
// gate.MaxFence matches gate.ErrFenceExhausted.
func (c *Client) AdvanceFence(ctx context.Context, key string, atLeast int64) (int64, error) {
	sk := c.Key(key)
	switch {
	case key == "":
		return 0, fmt.Errorf("advance fence: %w: key is empty", gate.ErrInvalidKey)
	case atLeast < 0:
		return 0, fmt.Errorf("advance fence %q: atLeast must be zero or positive, got %d", sk, atLeast)
	case atLeast > gate.MaxFence:
		return 0, fmt.Errorf("advance fence %q to %d: %w", sk, atLeast, gate.ErrFenceExhausted)
	}
	f, err := c.b.AdvanceFence(ctx, sk, atLeast, c.opts.TTL)
	if err != nil {
		return 0, fmt.Errorf("advance fence %q: %w", sk, err)
	}
	return f, nil
}

// newToken returns a random claim token.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b[:])
}
