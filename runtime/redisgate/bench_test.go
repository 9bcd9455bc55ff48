package redisgate_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

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

// benchImpl returns one claim-then-complete step on key i under prefix p.
type benchImpl func(b *testing.B, c *redis.Client, p string) func(ctx context.Context, i int)

var benchImpls = []struct {
	name string
	make benchImpl
}{
	{"redisgate", func(b *testing.B, c *redis.Client, p string) func(context.Context, int) {
		s, err := redisgate.New(c, &redisgate.Options{Prefix: p})
		if err != nil {
			b.Fatal(err)
		}
		return func(ctx context.Context, i int) {
			key := strconv.Itoa(i)
			res, err := s.Claim(ctx, gate.ClaimRequest{Key: key, Token: key, Owner: "bench", Lease: benchLease, TTL: benchTTL})
			if err != nil || res.Status != gate.Won {
				b.Fatalf("Claim = %v, %v", res.Status, err)
			}
			if ok, err := s.Complete(ctx, gate.Completion{Key: key, Fence: res.Record.Fence, TTL: benchTTL}); err != nil || !ok {
				b.Fatalf("Complete = %v, %v", ok, err)
			}
		}
	}},
	// The floor: two plain commands, no script, no record.
	{"floor", func(b *testing.B, c *redis.Client, p string) func(context.Context, int) {
		return func(ctx context.Context, i int) {
			key := p + strconv.Itoa(i)
			if ok, err := c.SetNX(ctx, key, "claimed", benchLease).Result(); err != nil || !ok {
				b.Fatalf("SET NX = %v, %v", ok, err)
			}
			if ok, err := c.SetXX(ctx, key, "done", benchTTL).Result(); err != nil || !ok {
				b.Fatalf("SET XX = %v, %v", ok, err)
			}
		}
	}},
	{"redsync", func(b *testing.B, c *redis.Client, p string) func(context.Context, int) {
		rs := redsync.New(goredis.NewPool(c))
		return func(ctx context.Context, i int) {
			m := rs.NewMutex(p+strconv.Itoa(i), redsync.WithExpiry(benchLease), redsync.WithTries(1))
			if err := m.LockContext(ctx); err != nil {
				b.Fatalf("Lock: %v", err)
			}
			if ok, err := m.UnlockContext(ctx); err != nil || !ok {
				b.Fatalf("Unlock = %v, %v", ok, err)
			}
		}
	}},
	{"redislock", func(b *testing.B, c *redis.Client, p string) func(context.Context, int) {
		lc := redislock.New(c)
		return func(ctx context.Context, i int) {
			l, err := lc.Obtain(ctx, p+strconv.Itoa(i), benchLease, nil)
			if err != nil {
				b.Fatalf("Obtain: %v", err)
			}
			if err := l.Release(ctx); err != nil {
				b.Fatalf("Release: %v", err)
			}
		}
	}},
}

// BenchmarkClaimComplete measures one claim plus one completion on a fresh key,
// one caller at a time, on the shared local Redis: redisgate against the raw
// floor (SET NX PX then SET XX PX), go-redsync's Lock+Unlock and bsm/redislock's
// Obtain+Release. Every implementation makes two round trips per key. Besides
// wall time it reports the CPU time per key of the (private) Redis server
// (srv-µs/op, from INFO cpu) and of this process (cli-µs/op: client, and the
// proxy when there is one), which a loaded machine disturbs less. net=lo is
// plain loopback; net=1ms goes through an in-process toxiproxy adding 1 ms to
// every answer, about a same-region network round trip. See docs/BENCHMARKS.md,
// "Redis backend".
func BenchmarkClaimComplete(b *testing.B) {
	addr := testenv.PrivateRedis(b).Addr() // its CPU counters are this benchmark's alone
	nets := []struct {
		name    string
		latency int // ms added to every answer; 0 means direct
	}{{"lo", 0}, {"1ms", 1}}
	for _, n := range nets {
		b.Run("net="+n.name, func(b *testing.B) {
			c := newClient(b, benchAddr(b, addr, n.latency))
			for _, impl := range benchImpls {
				b.Run("impl="+impl.name, func(b *testing.B) {
					p := uniquePrefix(b) // -count runs each sub-benchmark several times
					b.Cleanup(func() { deletePrefix(b, newClient(b, addr), p) })
					step := impl.make(b, c, p)
					ctx := context.Background()
					srv0, cli0 := serverCPU(b, c), clientCPU(b)
					n := 0
					for ; b.Loop(); n++ {
						step(ctx, n)
					}
					b.ReportMetric(float64((serverCPU(b, c)-srv0).Microseconds())/float64(n), "srv-µs/op")
					b.ReportMetric(float64((clientCPU(b)-cli0).Microseconds())/float64(n), "cli-µs/op")
				})
			}
		})
	}
}

// serverCPU returns the CPU time the Redis server has used (INFO cpu:
// used_cpu_user + used_cpu_sys).
func serverCPU(b *testing.B, c *redis.Client) time.Duration {
	info, err := c.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatalf("INFO cpu: %v", err)
	}
	var total float64
	for _, line := range strings.Split(info, "\r\n") {
		name, v, _ := strings.Cut(line, ":")
		if name == "used_cpu_user" || name == "used_cpu_sys" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatalf("INFO cpu %s: %v", line, err)
			}
			total += f
		}
	}
	return time.Duration(total * float64(time.Second))
}

// benchAddr returns addr itself, or with latencyMillis > 0 the address of a
// toxiproxy in this process that delays every answer from addr by that much.
func benchAddr(b *testing.B, addr string, latencyMillis int) string {
	if latencyMillis == 0 {
		return addr
	}
	p := toxiproxy.NewProxy(toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()), "redis", "127.0.0.1:0", addr)
	if err := p.Start(); err != nil {
		b.Fatalf("toxiproxy: %v", err)
	}
	b.Cleanup(p.Stop)
	toxic := `{"name":"latency","type":"latency","stream":"downstream","toxicity":1,"attributes":{"latency":` + strconv.Itoa(latencyMillis) + `}}`
	if _, err := p.Toxics.AddToxicJson(strings.NewReader(toxic)); err != nil {
		b.Fatalf("toxiproxy: add latency: %v", err)
	}
	return p.Listen
}
