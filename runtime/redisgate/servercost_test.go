package redisgate_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/redisgate"
)

// BenchmarkServerInstructions counts the instructions a Redis server spends per
// message, with valgrind's callgrind on a private redis-server: the count repeats
// whatever else the machine does, where CPU time does not. Each sub-benchmark
// runs the real client code (go-redis v9, one caller, one round trip per call),
// so what the server pays for reading requests and writing replies is counted as
// a deployment pays it. op=message is one message's store work on a fresh key
// (redisgate's Claim then Complete against redislock's Obtain then Release,
// redsync's Lock then Unlock and the floor's SET NX PX then SET XX PX), and
// op=claim and op=complete its two halves for redisgate and redislock;
// op=duplicate is a claim of a done key, op=in-progress a claim of a key another
// holds, op=get-script an EVALSHA that only GETs the key and op=get a plain GET,
// the least one round trip costs. It reports srv-instr/op; run it with a fixed
// count (callgrind slows the server some 50×):
//
//	go test -run '^$' -bench ServerInstructions -benchtime 2000x ./runtime/redisgate/
//
// It skips when valgrind is not installed. See docs/BENCHMARKS.md, "Redis backend".
func BenchmarkServerInstructions(b *testing.B) {
	srv := startCallgrindRedis(b)
	c := newClient(b, srv.addr)
	ctx := context.Background()
	getScript := redis.NewScript(`return redis.call('GET', KEYS[1])`)
	var locks sync.Map // op=complete/impl=redislock: key → the lock its prepare obtained
	cases := []struct {
		name string
		// prepare writes what key i needs before counting starts; nil for none.
		prepare func(s *redisgate.Store, key string)
		step    func(s *redisgate.Store, p string) func(i int)
	}{
		{"op=message/impl=redisgate", nil, func(s *redisgate.Store, _ string) func(int) {
			return func(i int) {
				key := strconv.Itoa(i)
				res, err := s.Claim(ctx, benchClaim(key, "tok-abcdefgh"))
				if err != nil || res.Status != gate.Won {
					b.Fatalf("Claim = %v, %v", res.Status, err)
				}
				if ok, err := s.Complete(ctx, gate.Completion{Key: key, Fence: res.Record.Fence, TTL: benchTTL}); err != nil || !ok {
					b.Fatalf("Complete = %v, %v", ok, err)
				}
			}
		}},
		{"op=message/impl=redislock", nil, func(_ *redisgate.Store, p string) func(int) {
			lc := redislock.New(c)
			return func(i int) {
				l, err := lc.Obtain(ctx, p+strconv.Itoa(i), benchLease, nil)
				if err != nil {
					b.Fatalf("Obtain: %v", err)
				}
				if err := l.Release(ctx); err != nil {
					b.Fatalf("Release: %v", err)
				}
			}
		}},
		{"op=message/impl=redsync", nil, func(_ *redisgate.Store, p string) func(int) {
			rs := redsync.New(goredis.NewPool(c))
			return func(i int) {
				m := rs.NewMutex(p+strconv.Itoa(i), redsync.WithExpiry(benchLease), redsync.WithTries(1))
				if err := m.LockContext(ctx); err != nil {
					b.Fatalf("Lock: %v", err)
				}
				if ok, err := m.UnlockContext(ctx); err != nil || !ok {
					b.Fatalf("Unlock = %v, %v", ok, err)
				}
			}
		}},
		{"op=message/impl=floor", nil, func(_ *redisgate.Store, p string) func(int) {
			return func(i int) {
				key := p + strconv.Itoa(i)
				if ok, err := c.SetNX(ctx, key, "claimed", benchLease).Result(); err != nil || !ok {
					b.Fatalf("SET NX = %v, %v", ok, err)
				}
				if ok, err := c.SetXX(ctx, key, "done", benchTTL).Result(); err != nil || !ok {
					b.Fatalf("SET XX = %v, %v", ok, err)
				}
			}
		}},
		{"op=claim/impl=redisgate", nil, func(s *redisgate.Store, _ string) func(int) {
			return func(i int) {
				if res, err := s.Claim(ctx, benchClaim(strconv.Itoa(i), "tok-abcdefgh")); err != nil || res.Status != gate.Won {
					b.Fatalf("Claim = %v, %v", res.Status, err)
				}
			}
		}},
		{"op=complete/impl=redisgate", func(s *redisgate.Store, key string) {
			if _, err := s.Claim(ctx, benchClaim(key, "tok-abcdefgh")); err != nil {
				b.Fatal(err)
			}
		}, func(s *redisgate.Store, _ string) func(int) {
			return func(i int) {
				if ok, err := s.Complete(ctx, gate.Completion{Key: strconv.Itoa(i), Fence: 1, TTL: benchTTL}); err != nil || !ok {
					b.Fatalf("Complete = %v, %v", ok, err)
				}
			}
		}},
		{"op=claim/impl=redislock", nil, func(_ *redisgate.Store, p string) func(int) {
			lc := redislock.New(c)
			return func(i int) {
				if _, err := lc.Obtain(ctx, p+strconv.Itoa(i), benchLease, nil); err != nil {
					b.Fatalf("Obtain: %v", err)
				}
			}
		}},
		{"op=complete/impl=redislock", func(s *redisgate.Store, key string) {
			l, err := redislock.New(c).Obtain(ctx, s.RedisKey(key), benchLease, nil)
			if err != nil {
				b.Fatal(err)
			}
			locks.Store(s.RedisKey(key), l)
		}, func(s *redisgate.Store, _ string) func(int) {
			return func(i int) {
				l, _ := locks.Load(s.RedisKey(strconv.Itoa(i)))
				if err := l.(*redislock.Lock).Release(ctx); err != nil {
					b.Fatalf("Release: %v", err)
				}
			}
		}},
		{"op=duplicate/impl=redisgate", func(s *redisgate.Store, key string) {
			res, err := s.Claim(ctx, benchClaim(key, "tok-first"))
			if err == nil {
				_, err = s.Complete(ctx, gate.Completion{Key: key, Fence: res.Record.Fence, TTL: benchTTL})
			}
			if err != nil {
				b.Fatal(err)
			}
		}, func(s *redisgate.Store, _ string) func(int) {
			return func(i int) {
				if res, err := s.Claim(ctx, benchClaim(strconv.Itoa(i), "tok-abcdefgh")); err != nil || res.Status != gate.AlreadyDone {
					b.Fatalf("Claim = %v, %v", res.Status, err)
				}
			}
		}},
		{"op=in-progress/impl=redisgate", func(s *redisgate.Store, key string) {
			if _, err := s.Claim(ctx, benchClaim(key, "tok-first")); err != nil {
				b.Fatal(err)
			}
		}, func(s *redisgate.Store, _ string) func(int) {
			return func(i int) {
				if res, err := s.Claim(ctx, benchClaim(strconv.Itoa(i), "tok-abcdefgh")); err != nil || res.Status != gate.HeldByOther {
					b.Fatalf("Claim = %v, %v", res.Status, err)
				}
			}
		}},
		{"op=get-script", nil, func(s *redisgate.Store, p string) func(int) {
			return func(i int) {
				if err := getScript.Run(ctx, c, []string{p + strconv.Itoa(i)}).Err(); err != nil && !errors.Is(err, redis.Nil) {
					b.Fatal(err)
				}
			}
		}},
		{"op=get", nil, func(s *redisgate.Store, p string) func(int) {
			return func(i int) {
				if err := c.Get(ctx, p+strconv.Itoa(i)).Err(); err != nil && !errors.Is(err, redis.Nil) {
					b.Fatal(err)
				}
			}
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			p := uniquePrefix(b)
			s, err := redisgate.New(c, &redisgate.Options{Prefix: p})
			if err != nil {
				b.Fatal(err)
			}
			step := tc.step(s, p)
			// Key -1 warms the connection and the script cache (EVALSHA's first
			// NOSCRIPT and its EVAL) outside the count.
			for i := -1; i < b.N; i++ {
				if tc.prepare != nil {
					tc.prepare(s, strconv.Itoa(i))
				}
			}
			step(-1)
			b.ResetTimer()
			srv.start(b)
			for i := 0; i < b.N; i++ {
				step(i)
			}
			n := srv.stop(b)
			b.ReportMetric(float64(n)/float64(b.N), "srv-instr/op")
		})
	}
}

// benchClaim is the claim every counted case makes: the benchmark's lease and
// TTL, and an owner of the length a host name and pid give.
func benchClaim(key, token string) gate.ClaimRequest {
	return gate.ClaimRequest{Key: key, Token: token, Owner: "owner-host/1234", Lease: benchLease, TTL: benchTTL}
}

// callgrindRedis is a redis-server run under valgrind's callgrind, instrumenting
// nothing until start.
type callgrindRedis struct {
	addr, dir string
	pid       int
	dumps     int
}

// startCallgrindRedis starts a private redis-server under callgrind on a free
// port, with serverCron at 1 Hz so its housekeeping adds little to the counts,
// and stops it when the benchmark ends. It skips without valgrind.
func startCallgrindRedis(b *testing.B) *callgrindRedis {
	b.Helper()
	vg, err := exec.LookPath("valgrind")
	if err != nil {
		b.Skip("valgrind is not installed (Debian package valgrind)")
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		testenv.Missing(b, "redis-server is not installed (Debian package redis-server)")
	}
	port := testenv.FreePort(b)
	dir := b.TempDir()
	cmd := exec.Command(vg, "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file="+filepath.Join(dir, "cg.%p"),
		bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--hz", "1")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		b.Fatalf("valgrind: %v", err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	srv := &callgrindRedis{addr: "127.0.0.1:" + strconv.Itoa(port), dir: dir, pid: cmd.Process.Pid}
	// Dial before pinging: go-redis logs every refused dial of its pool.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if conn, err := net.Dial("tcp", srv.addr); err == nil {
			_ = conn.Close()
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("redis-server under valgrind did not listen within 60s:\n%s", log.String())
		}
	}
	c := redis.NewClient(&redis.Options{Addr: srv.addr, DisableIdentity: true})
	defer c.Close()
	if err := c.Ping(context.Background()).Err(); err != nil {
		b.Fatalf("redis-server under valgrind: %v\n%s", err, log.String())
	}
	return srv
}

// start zeroes the counters and turns instrumentation on.
func (s *callgrindRedis) start(b *testing.B) {
	s.control(b, "-i", "on")
	s.control(b, "-z")
}

// stop dumps the counters, turns instrumentation off and returns the
// instructions counted since start.
func (s *callgrindRedis) stop(b *testing.B) int64 {
	s.dumps++
	tag := "oncegate-" + strconv.Itoa(s.dumps)
	s.control(b, "-d", tag)
	s.control(b, "-i", "off")
	files, _ := filepath.Glob(filepath.Join(s.dir, "cg.*"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || !bytes.Contains(data, []byte("\ndesc: Trigger: dump "+tag+"\n")) {
			continue
		}
		_, rest, ok := bytes.Cut(data, []byte("\ntotals: "))
		if !ok {
			b.Fatalf("%s has no totals line", f)
		}
		line, _, _ := bytes.Cut(rest, []byte("\n"))
		n, err := strconv.ParseInt(string(bytes.Fields(line)[0]), 10, 64)
		if err != nil {
			b.Fatalf("%s totals: %v", f, err)
		}
		return n
	}
	b.Fatalf("no callgrind dump %q in %s", tag, s.dir)
	return 0
}

func (s *callgrindRedis) control(b *testing.B, args ...string) {
	out, err := exec.Command("callgrind_control", append(args, strconv.Itoa(s.pid))...).CombinedOutput()
	if err != nil {
		b.Fatalf("callgrind_control %v: %v\n%s", args, err, out)
	}
	if bytes.Contains(out, []byte("Error")) {
		b.Fatalf("callgrind_control %v: %s", args, out)
	}
}
