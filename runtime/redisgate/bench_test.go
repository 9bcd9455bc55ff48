package redisgate_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/redisgate"
)

// Lease and TTL of every benchmarked key: long enough that nothing expires during
// a run, short enough that the keys clean themselves up.
const (
	benchLease = 30 * time.Second
	benchTTL   = time.Minute
)

// BenchmarkClaimComplete measures one claim plus one completion on a fresh key,
// one caller at a time, on the shared local Redis, against the raw floor (SET NX
// PX then SET XX PX: two round trips and no script), go-redsync's Lock+Unlock and
// bsm/redislock's Obtain+Release. Every implementation does two round trips per
// key. See docs/BENCHMARKS.md, "Redis backend".
func BenchmarkClaimComplete(b *testing.B) {
	c := newClient(b, testenv.Redis(b))
	ctx := context.Background()
	// fresh returns a key prefix for one run of a sub-benchmark (-count runs each
	// several times) and deletes its keys afterwards.
	fresh := func(b *testing.B) string {
		p := uniquePrefix(b)
		b.Cleanup(func() { deletePrefix(b, c, p) })
		return p
	}

	b.Run("impl=redisgate", func(b *testing.B) {
		s, err := redisgate.New(c, &redisgate.Options{Prefix: fresh(b)})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; b.Loop(); i++ {
			key := strconv.Itoa(i)
			res, err := s.Claim(ctx, gate.ClaimRequest{Key: key, Token: key, Owner: "bench", Lease: benchLease, TTL: benchTTL})
			if err != nil || res.Status != gate.Won {
				b.Fatalf("Claim = %v, %v", res.Status, err)
			}
			if ok, err := s.Complete(ctx, gate.Completion{Key: key, Fence: res.Record.Fence, TTL: benchTTL}); err != nil || !ok {
				b.Fatalf("Complete = %v, %v", ok, err)
			}
		}
	})
	b.Run("impl=floor", func(b *testing.B) {
		p := fresh(b)
		for i := 0; b.Loop(); i++ {
			key := p + strconv.Itoa(i)
			if ok, err := c.SetNX(ctx, key, "claimed", benchLease).Result(); err != nil || !ok {
				b.Fatalf("SET NX = %v, %v", ok, err)
			}
			if ok, err := c.SetXX(ctx, key, "done", benchTTL).Result(); err != nil || !ok {
				b.Fatalf("SET XX = %v, %v", ok, err)
			}
		}
	})
	b.Run("impl=redsync", func(b *testing.B) {
		rs := redsync.New(goredis.NewPool(c))
		p := fresh(b)
		for i := 0; b.Loop(); i++ {
			m := rs.NewMutex(p+strconv.Itoa(i), redsync.WithExpiry(benchLease), redsync.WithTries(1))
			if err := m.LockContext(ctx); err != nil {
				b.Fatalf("Lock: %v", err)
			}
			if ok, err := m.UnlockContext(ctx); err != nil || !ok {
				b.Fatalf("Unlock = %v, %v", ok, err)
			}
		}
	})
	b.Run("impl=redislock", func(b *testing.B) {
		lc := redislock.New(c)
		p := fresh(b)
		for i := 0; b.Loop(); i++ {
			l, err := lc.Obtain(ctx, p+strconv.Itoa(i), benchLease, nil)
			if err != nil {
				b.Fatalf("Obtain: %v", err)
			}
			if err := l.Release(ctx); err != nil {
				b.Fatalf("Release: %v", err)
			}
		}
	})
}
