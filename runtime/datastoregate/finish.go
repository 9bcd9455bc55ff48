package datastoregate

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// held reports whether cur is a claimed record holding fence.
func held(cur *gate.Record, fence int64) bool {
	return cur != nil && cur.State == gate.StateClaimed && cur.Fence == fence
}

// Complete implements gate.Backend: a claimed record whose fence equals c.Fence
// becomes done, with no lease guard, in one transaction of two RPCs. It reports
// false when the fence is stale or the record is not claimed.
func (s *Store) Complete(ctx context.Context, c gate.Completion) (bool, error) {
	return s.finish(ctx, "complete", c, gate.StateDone)
}

// Fail implements gate.Backend like Complete, moving the record to failed.
func (s *Store) Fail(ctx context.Context, c gate.Completion) (bool, error) {
	return s.finish(ctx, "fail", c, gate.StateFailed)
}

func (s *Store) finish(ctx context.Context, op string, c gate.Completion, st gate.State) (bool, error) {
	return update(ctx, s, op, c.Key, func(now time.Time, cur *gate.Record) (*gate.Record, bool, error) {
		if !held(cur, c.Fence) {
			return nil, false, nil
		}
		n := *cur
		n.State, n.DoneAt, n.ExpiresAt, n.Result = st, now, now.Add(c.TTL), bytes.Clone(c.Result)
		return &n, true, nil
	})
}

// Release implements gate.Backend: a claimed record whose fence equals fence
// gets lease_expiry = now and fence+1, and loses its claim token. It reports false
// when the fence is stale; a fence already at gate.MaxFence is an error matching
// gate.ErrFenceExhausted.
func (s *Store) Release(ctx context.Context, key string, fence int64) (bool, error) {
	return update(ctx, s, "release", key, func(now time.Time, cur *gate.Record) (*gate.Record, bool, error) {
		if !held(cur, fence) {
			return nil, false, nil
		}
		if cur.Fence >= gate.MaxFence {
			return nil, false, fmt.Errorf("key %q: %w", key, gate.ErrFenceExhausted)
		}
		n := *cur
		n.Fence, n.LeaseExpiry, n.ClaimToken = n.Fence+1, now, ""
		return &n, true, nil
	})
}

// Renew implements gate.Backend: lease_expiry = now + lease, and expires_at at
// least lease_expiry + ttl, on a claimed record whose fence equals fence, even
// if its lease lapsed (but it was not reclaimed). It reports false when stale.
func (s *Store) Renew(ctx context.Context, key string, fence int64, lease, ttl time.Duration) (bool, error) {
	return update(ctx, s, "renew", key, func(now time.Time, cur *gate.Record) (*gate.Record, bool, error) {
		if !held(cur, fence) {
			return nil, false, nil
		}
		n := *cur
		n.LeaseExpiry = now.Add(lease)
		if e := n.LeaseExpiry.Add(ttl); e.After(n.ExpiresAt) {
			n.ExpiresAt = e
		}
		return &n, true, nil
	})
}

// MarkUnknown implements gate.Backend: a claimed record whose fence equals
// fence becomes unknown, without expires_at, so neither the TTL policy nor Purge
// ever deletes it. It reports false when stale.
func (s *Store) MarkUnknown(ctx context.Context, key string, fence int64) (bool, error) {
	return update(ctx, s, "mark unknown", key, func(_ time.Time, cur *gate.Record) (*gate.Record, bool, error) {
		if !held(cur, fence) {
			return nil, false, nil
		}
		n := *cur
		n.State, n.ExpiresAt = gate.StateUnknown, time.Time{}
		return &n, true, nil
	})
}

// AdvanceFence implements gate.Backend: the fence becomes max(fence,
// atLeast), never lower; an absent key gets a lapsed claimed record with that
// fence and expires_at = now + ttl. atLeast past gate.MaxFence is an error
// matching gate.ErrFenceExhausted, returned before any RPC.
func (s *Store) AdvanceFence(ctx context.Context, key string, atLeast int64, ttl time.Duration) (int64, error) {
	if atLeast > gate.MaxFence {
		return 0, fmt.Errorf("key %q: advance to %d: %w", key, atLeast, gate.ErrFenceExhausted)
	}
	return update(ctx, s, "advance fence", key, func(now time.Time, cur *gate.Record) (*gate.Record, int64, error) {
		if cur != nil && atLeast <= cur.Fence {
			return nil, cur.Fence, nil
		}
		var n gate.Record
		if cur != nil {
			n = *cur
		} else {
			n = gate.Record{Key: key, State: gate.StateClaimed, LeaseExpiry: now, ExpiresAt: now.Add(ttl)}
		}
		n.Fence = max(atLeast, n.Fence)
		return &n, n.Fence, nil
	})
}

// Resolve implements gate.Admin: an unknown record becomes done (asDone, with
// expires_at = now + ttl) or a lapsed claim with fence+1 (retry). It returns an
// error matching gate.ErrNotFound when the key is absent and gate.ErrNotUnknown
// when its state is not unknown.
func (s *Store) Resolve(ctx context.Context, key string, asDone bool, ttl time.Duration) error {
	_, err := update(ctx, s, "resolve", key, func(now time.Time, cur *gate.Record) (*gate.Record, struct{}, error) {
		switch {
		case cur == nil:
			return nil, struct{}{}, fmt.Errorf("resolve %q: %w", key, gate.ErrNotFound)
		case cur.State != gate.StateUnknown:
			return nil, struct{}{}, fmt.Errorf("resolve %q (state %s): %w", key, cur.State, gate.ErrNotUnknown)
		}
		n := *cur
		if asDone {
			n.State, n.DoneAt, n.ExpiresAt = gate.StateDone, now, now.Add(ttl)
			return &n, struct{}{}, nil
		}
		if n.Fence >= gate.MaxFence {
			return nil, struct{}{}, fmt.Errorf("resolve %q: %w", key, gate.ErrFenceExhausted)
		}
		n.State, n.Fence, n.LeaseExpiry, n.ExpiresAt, n.ClaimToken = gate.StateClaimed, n.Fence+1, now, now.Add(ttl), ""
		return &n, struct{}{}, nil
	})
	return err
}
