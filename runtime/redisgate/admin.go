package redisgate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// Resolve script statuses besides 1 (resolved) and claimFenceExhausted.
const (
	resolveNotFound   = -1
	resolveNotUnknown = -3
)

// AdvanceFence implements gate.Backend: the fence becomes max(fence,
// atLeast) and the stored fence is returned; it is never lowered. An absent key
// gets a lapsed claim with that fence and expires_at = now + ttl (the key's TTL).
// atLeast past gate.MaxFence returns an error matching gate.ErrFenceExhausted
// without contacting Redis.
func (s *Store) AdvanceFence(ctx context.Context, key string, atLeast int64, ttl time.Duration) (int64, error) {
	if atLeast > gate.MaxFence {
		return 0, fmt.Errorf("key %s: advance to %d: %w", quoteKey(key), atLeast, gate.ErrFenceExhausted)
	}
	v, err := s.run(ctx, advanceScript, "advance fence", key, fenceArg(atLeast), millis(ttl))
	if err != nil {
		return 0, err
	}
	str, _ := v.(string)
	f, err := strconv.ParseInt(str, 10, 64)
	if err != nil {
		return 0, s.wrap("advance fence", key, fmt.Errorf("fence reply %v: %w", v, err))
	}
	return f, nil
}

// Inspect implements gate.Backend: it returns the record and true, or false
// when the key is absent or past expires_at on the server clock. It changes
// nothing.
func (s *Store) Inspect(ctx context.Context, key string) (gate.Record, bool, error) {
	v, err := s.run(ctx, inspectScript, "inspect", key)
	if err != nil {
		return gate.Record{}, false, err
	}
	if str, ok := v.(string); ok {
		rec, err := decodeReply(key, str)
		if err != nil {
			return gate.Record{}, false, s.wrap("inspect", key, err)
		}
		return rec, true, nil
	}
	live, payload, err := reply(v)
	if err != nil {
		return gate.Record{}, false, s.wrap("inspect", key, err)
	}
	if live != 1 {
		return gate.Record{}, false, nil
	}
	rec, err := decodeRecord(key, payload)
	if err != nil {
		return gate.Record{}, false, s.wrap("inspect", key, err)
	}
	return rec, true, nil
}

// Resolve implements gate.Admin: an unknown record becomes done (asDone;
// done_at = now) or a lapsed claim with fence+1 and no claim token (retry), with
// expires_at = now + ttl and the key's TTL set again. It returns an error matching
// gate.ErrNotFound when the key is absent, gate.ErrNotUnknown when the record is
// not unknown, and gate.ErrFenceExhausted when a retry would pass gate.MaxFence.
func (s *Store) Resolve(ctx context.Context, key string, asDone bool, ttl time.Duration) error {
	done := "0"
	if asDone {
		done = "1"
	}
	v, err := s.run(ctx, resolveScript, "resolve", key, done, millis(ttl))
	if err != nil {
		return err
	}
	status, payload, err := reply(v)
	if err != nil {
		return s.wrap("resolve", key, err)
	}
	switch status {
	case 1:
		return nil
	case resolveNotFound:
		return fmt.Errorf("resolve %s: %w", quoteKey(key), gate.ErrNotFound)
	case resolveNotUnknown:
		return fmt.Errorf("resolve %s (state %v): %w", quoteKey(key), payload, gate.ErrNotUnknown)
	case claimFenceExhausted:
		return fmt.Errorf("resolve %s: %w", quoteKey(key), gate.ErrFenceExhausted)
	}
	return s.wrap("resolve", key, fmt.Errorf("unexpected status %d", status))
}

// Purge implements gate.Admin. It deletes nothing and returns 0, nil: every
// record that is not unknown has its key's expiry at its expires_at, so Redis has
// already removed each record whose expires_at has passed (a key is never
// readable past its expiry), and unknown records are never purged. It does not
// contact Redis.
func (s *Store) Purge(context.Context, int) (int, error) { return 0, nil }

// Now reads the server's clock (TIME), so lock queries judge leases on the clock
// that set them; it implements dlock.Clock. In a Cluster it reads the clock of
// whichever node the client picks for a keyless command; each record is judged
// by its own master's clock, so the masters' clocks should agree (NTP).
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	t, err := s.c.Time(ctx).Result()
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return time.Time{}, err
		}
		return time.Time{}, fmt.Errorf("redisgate: read server clock: %w", err)
	}
	return t.UTC(), nil
}
