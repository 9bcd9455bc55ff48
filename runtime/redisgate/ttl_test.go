package redisgate_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/redisgate"
)

// TestEveryKeyHasItsTTL runs random sequences of every operation on a few keys and
// checks after each one that every key's expiry is exactly its expires_at, and that
// unknown records alone have none.
func TestEveryKeyHasItsTTL(t *testing.T) {
	s, c := newStore(t)
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	keys := []string{"a", "b", "c"}
	leases := []time.Duration{0, 30 * time.Millisecond, time.Minute}
	ttls := []time.Duration{20 * time.Millisecond, time.Hour}
	pick := func(d []time.Duration) time.Duration { return d[rng.IntN(len(d))] }
	seen := map[string]bool{}
	for i := range 400 {
		k := keys[rng.IntN(len(keys))]
		fence := int64(1)
		if r, ok, err := s.Inspect(ctx, k); err != nil {
			t.Fatalf("Inspect: %v", err)
		} else if ok {
			fence = r.Fence - int64(rng.IntN(2)) // sometimes stale
		}
		op, err := step(ctx, s, rng.IntN(9), k, fence, pick(leases), pick(ttls))
		if err != nil && !errors.Is(err, gate.ErrNotFound) && !errors.Is(err, gate.ErrNotUnknown) {
			t.Fatalf("step %d %s: %v", i, op, err)
		}
		seen[op] = true
		checkTTLs(t, c, s.Prefix())
		if t.Failed() {
			t.Fatalf("after step %d: %s on %q", i, op, k)
		}
		if rng.IntN(20) == 0 {
			time.Sleep(40 * time.Millisecond) // let short leases and TTLs lapse
		}
	}
	if len(seen) != 9 {
		t.Fatalf("only %d of 9 operations ran", len(seen))
	}
}

// step runs operation op on key and names it.
func step(ctx context.Context, s *redisgate.Store, op int, key string, fence int64, lease, ttl time.Duration) (string, error) {
	var err error
	switch op {
	case 0:
		_, err = s.Claim(ctx, gate.ClaimRequest{Key: key, Token: fmt.Sprint(rand.Int64()), Owner: "o", Lease: lease, TTL: ttl})
		return "claim", err
	case 1:
		_, err = s.Complete(ctx, gate.Completion{Key: key, Fence: fence, TTL: ttl, Result: []byte("r")})
		return "complete", err
	case 2:
		_, err = s.Fail(ctx, gate.Completion{Key: key, Fence: fence, TTL: ttl})
		return "fail", err
	case 3:
		_, err = s.Release(ctx, key, fence)
		return "release", err
	case 4:
		_, err = s.Renew(ctx, key, fence, lease, ttl)
		return "renew", err
	case 5:
		_, err = s.MarkUnknown(ctx, key, fence)
		return "mark unknown", err
	case 6:
		_, err = s.AdvanceFence(ctx, key, fence+2, ttl)
		return "advance fence", err
	case 7:
		return "resolve", s.Resolve(ctx, key, rand.IntN(2) == 0, ttl)
	default:
		_, err = s.Purge(ctx, 0)
		return "purge", err
	}
}
