package redisgate

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// Complete implements gate.Backend: a claimed record whose fence equals c.Fence
// becomes done with done_at = now, expires_at = now + c.TTL (the key's TTL too),
// no lease_expiry (doc.go, "Records") and c.Result stored (nil or empty stores
// none). There is no lease guard. It
// reports false when the fence is stale, the record is not claimed, or the
// record is gone.
func (s *Store) Complete(ctx context.Context, c gate.Completion) (bool, error) {
	return s.finish(ctx, "complete", c, gate.StateDone)
}

// Fail implements gate.Backend like Complete, with state failed.
func (s *Store) Fail(ctx context.Context, c gate.Completion) (bool, error) {
	return s.finish(ctx, "fail", c, gate.StateFailed)
}

func (s *Store) finish(ctx context.Context, op string, c gate.Completion, st gate.State) (bool, error) {
	f, ttl := fenceArg(c.Fence), strconv.FormatInt(millis(c.TTL), 10)
	args := []any{valueVersion + "claimed " + f + " ", ttl, valueVersion + string(st) + " " + f + "  " + ttl}
	if len(c.Result) > 0 {
		args = append(args, c.Result)
	}
	v, err := s.run(ctx, finishScript, op, c.Key, args...)
	if err != nil {
		return false, err
	}
	return s.committed(op, c.Key, v)
}

// Release implements gate.Backend: a claimed record whose fence equals fence gets
// lease_expiry = now, fence+1 and no claim token; its expires_at is unchanged. It
// reports false when the fence is stale. Releasing at gate.MaxFence returns an
// error matching gate.ErrFenceExhausted.
func (s *Store) Release(ctx context.Context, key string, fence int64) (bool, error) {
	v, err := s.run(ctx, releaseScript, "release", key, fenceArg(fence))
	if err != nil {
		return false, err
	}
	if n, ok := v.(int64); ok && n == claimFenceExhausted {
		return false, fmt.Errorf("release %s: %w", quoteKey(key), gate.ErrFenceExhausted)
	}
	return s.committed("release", key, v)
}

// Renew implements gate.Backend: lease_expiry = now + lease and, when later,
// expires_at = lease_expiry + ttl (the key's TTL follows), fence unchanged. A
// lapsed but un-reclaimed claim is renewed. It reports false when the fence is
// stale or the record is not claimed.
func (s *Store) Renew(ctx context.Context, key string, fence int64, lease, ttl time.Duration) (bool, error) {
	v, err := s.run(ctx, renewScript, "renew", key, fenceArg(fence), millis(lease), millis(ttl))
	if err != nil {
		return false, err
	}
	return s.committed("renew", key, v)
}

// MarkUnknown implements gate.Backend: a claimed record whose fence equals
// fence becomes unknown, loses expires_at and its key's TTL, and so stays until
// resolved. It reports false when stale.
func (s *Store) MarkUnknown(ctx context.Context, key string, fence int64) (bool, error) {
	v, err := s.run(ctx, unknownScript, "mark unknown", key, fenceArg(fence))
	if err != nil {
		return false, err
	}
	return s.committed("mark unknown", key, v)
}

// committed reads a script's 1 (done) or 0 (refused) reply.
func (s *Store) committed(op, key string, v any) (bool, error) {
	if n, ok := v.(int64); ok && (n == 0 || n == 1) {
		return n == 1, nil
	}
	return false, s.wrap(op, key, fmt.Errorf("unexpected reply %v", v))
}

// fenceArg formats a fence as the decimal string the scripts compare.
func fenceArg(f int64) string { return strconv.FormatInt(f, 10) }
