package sqlgate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// Complete implements gate.Backend: a claimed record whose fence equals c.Fence
// becomes done with done_at = now, expires_at = now + c.TTL and c.Result, with no
// lease guard. It reports false when the fence is stale or the record is not
// claimed.
func (s *Store) Complete(ctx context.Context, c gate.Completion) (bool, error) {
	return s.finish(ctx, c, gate.StateDone)
}

// Fail implements gate.Backend: like Complete, to state failed.
func (s *Store) Fail(ctx context.Context, c gate.Completion) (bool, error) {
	return s.finish(ctx, c, gate.StateFailed)
}

func (s *Store) finish(ctx context.Context, c gate.Completion, st gate.State) (bool, error) {
	sk, _ := storedKey(c.Key)
	res, err := s.exec(ctx, s.q.finish, sk, c.Fence, string(st), millis(c.TTL), nullBytes(c.Result))
	if err != nil {
		return false, s.wrapErr(ctx, err, "%s %s", verb(st), keyq(c.Key))
	}
	return one(res)
}

func verb(st gate.State) string {
	if st == gate.StateFailed {
		return "fail"
	}
	return "complete"
}

// Release implements gate.Backend: a claimed record whose fence equals fence
// gets fence+1, lease_expiry = now and no claim token, so any claim wins it at
// once (and a retried claim carrying the released token does not re-affirm). It
// reports false when the fence is stale; releasing the record holding
// gate.MaxFence returns an error matching gate.ErrFenceExhausted.
func (s *Store) Release(ctx context.Context, key string, fence int64) (bool, error) {
	sk, _ := storedKey(key)
	if fence >= maxFence {
		held, err := s.held(ctx, sk, fence)
		if err != nil {
			return false, s.wrapErr(ctx, err, "release %s", keyq(key))
		}
		if held {
			return false, fmt.Errorf("sqlgate: release %s: %w", keyq(key), gate.ErrFenceExhausted)
		}
		return false, nil
	}
	res, err := s.exec(ctx, s.q.release, sk, fence)
	if err != nil {
		return false, s.wrapErr(ctx, err, "release %s", keyq(key))
	}
	return one(res)
}

// held reports whether the record for sk (stored form) is claimed with fence.
func (s *Store) held(ctx context.Context, sk string, fence int64) (bool, error) {
	var x int
	err := s.queryRow(ctx, nil, s.q.held, sk, fence).Scan(&x)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// Renew implements gate.Backend: a claimed record whose fence equals fence gets
// lease_expiry = now + lease and expires_at = max(expires_at, lease_expiry + ttl),
// its fence unchanged; a lapsed but un-reclaimed lease is renewed. It reports
// false when the fence is stale or the record is not claimed.
func (s *Store) Renew(ctx context.Context, key string, fence int64, lease, ttl time.Duration) (bool, error) {
	sk, _ := storedKey(key)
	res, err := s.exec(ctx, s.q.renew, sk, fence, millis(lease), millis(ttl))
	if err != nil {
		return false, s.wrapErr(ctx, err, "renew %s", keyq(key))
	}
	ok, err := one(res)
	if err != nil || ok || s.dialect != MySQL {
		return ok, err
	}
	// MySQL counts changed rows, not matched ones (unless the pool set
	// clientFoundRows): a renewal within the same millisecond as the last one
	// changes nothing and reports 0. The record is still held if its fence
	// matches.
	ok, err = s.held(ctx, sk, fence)
	if err != nil {
		return false, s.wrapErr(ctx, err, "renew %s", keyq(key))
	}
	return ok, nil
}

// MarkUnknown implements gate.Backend: a claimed record whose fence equals
// fence becomes unknown with no expires_at, so it is never purged and claims
// answer Unknown until Resolve. It reports false when stale.
func (s *Store) MarkUnknown(ctx context.Context, key string, fence int64) (bool, error) {
	sk, _ := storedKey(key)
	res, err := s.exec(ctx, s.q.markUnknown, sk, fence)
	if err != nil {
		return false, s.wrapErr(ctx, err, "mark unknown %s", keyq(key))
	}
	return one(res)
}
