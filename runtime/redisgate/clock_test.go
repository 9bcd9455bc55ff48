package redisgate_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/dlock"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/redisgate"
)

// shiftedRedis starts a private redis-server whose wall clock is shift away from
// this process's, through testdata/clockshift.c loaded with LD_PRELOAD, and
// returns a client for it.
func shiftedRedis(t *testing.T, shift time.Duration) *redis.Client {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		testenv.Missing(t, "no C compiler to build the clock shim: %v", err)
	}
	dir := t.TempDir()
	lib := filepath.Join(dir, "clockshift.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-O2", "-o", lib, filepath.Join("testdata", "clockshift.c"), "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("build clock shim: %v\n%s", err, out)
	}
	p, err := startRedis(filepath.Join(dir, "redis"), testenv.FreePort(t),
		[]string{"LD_PRELOAD=" + lib, "CLOCKSHIFT_SECONDS=" + strconv.Itoa(int(shift.Seconds()))})
	if err != nil {
		testenv.Missing(t, "redis-server with a shifted clock: %v", err)
	}
	t.Cleanup(p.stop)
	c := newClient(t, p.addr())
	if got := time.Until(serverTime(t, c)); (got - shift).Abs() > time.Minute {
		t.Fatalf("server clock is %v from ours, want %v: the shim did not take", got, shift)
	}
	return c
}

func serverTime(t *testing.T, c redis.UniversalClient) time.Time {
	t.Helper()
	now, err := c.Time(context.Background()).Result()
	if err != nil {
		t.Fatalf("TIME: %v", err)
	}
	return now
}

// within fails the test unless got is in [lo, hi] after truncating lo to the
// millisecond, the precision records are stored with.
func within(t *testing.T, what string, got, lo, hi time.Time) {
	t.Helper()
	if got.Before(lo.Truncate(time.Millisecond)) || got.After(hi) {
		t.Fatalf("%s = %v, want within [%v, %v] (server clock)", what, got, lo, hi)
	}
}

// TestServerClock proves that leases, expiry and TTLs follow the server's clock:
// the server runs two hours ahead of, or behind, the test process. A backend that
// used the client's clock would stamp times two hours off and set PEXPIREAT two
// hours off, so the key would vanish at once (server ahead) or live two hours too
// long (server behind).
func TestServerClock(t *testing.T) {
	for _, shift := range []time.Duration{2 * time.Hour, -2 * time.Hour} {
		t.Run(shift.String(), func(t *testing.T) {
			c := shiftedRedis(t, shift)
			s, err := redisgate.New(c, &redisgate.Options{Prefix: uniquePrefix(t)})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			const lease, ttl = 5 * time.Minute, time.Hour

			before := serverTime(t, c)
			res, err := s.Claim(ctx, gate.ClaimRequest{Key: "k", Token: "t1", Owner: "o", Lease: lease, TTL: ttl})
			after := serverTime(t, c)
			if err != nil || res.Status != gate.Won {
				t.Fatalf("Claim = %v, %v", res.Status, err)
			}
			within(t, "lease_expiry", res.Record.LeaseExpiry, before.Add(lease), after.Add(lease))
			within(t, "expires_at", res.Record.ExpiresAt, before.Add(lease+ttl), after.Add(lease+ttl))
			if pttl := c.PTTL(ctx, s.RedisKey("k")).Val(); pttl <= lease+ttl-10*time.Second || pttl > lease+ttl {
				t.Fatalf("PTTL = %v, want about %v: PEXPIREAT must be on the server clock", pttl, lease+ttl)
			}
			mustClaim(t, s, "k", lease, gate.HeldByOther)

			before = serverTime(t, c)
			if ok, err := s.Complete(ctx, gate.Completion{Key: "k", Fence: res.Record.Fence, TTL: ttl}); err != nil || !ok {
				t.Fatalf("Complete = %v, %v", ok, err)
			}
			after = serverTime(t, c)
			rec, ok, err := s.Inspect(ctx, "k")
			if err != nil || !ok {
				t.Fatalf("Inspect = %v, %v", ok, err)
			}
			within(t, "done_at", rec.DoneAt, before, after)
			if !rec.ExpiresAt.Equal(rec.DoneAt.Add(ttl)) {
				t.Fatalf("expires_at %v, want done_at + %v", rec.ExpiresAt, ttl)
			}

			// A short lease lapses as the server's clock moves, and is reclaimed.
			mustClaim(t, s, "short", 500*time.Millisecond, gate.Won)
			mustClaim(t, s, "short", lease, gate.HeldByOther)
			time.Sleep(700 * time.Millisecond)
			if r := mustClaim(t, s, "short", lease, gate.Won); r.Fence != 2 {
				t.Fatalf("reclaim fence = %d, want 2", r.Fence)
			}

			before = serverTime(t, c)
			if ok, err := s.Renew(ctx, "short", 2, lease, ttl); err != nil || !ok {
				t.Fatalf("Renew = %v, %v", ok, err)
			}
			after = serverTime(t, c)
			rec, _, _ = s.Inspect(ctx, "short")
			within(t, "renewed lease_expiry", rec.LeaseExpiry, before.Add(lease), after.Add(lease))

			var clock dlock.Clock = s // lock queries judge leases on this clock
			before = serverTime(t, c)
			now, err := clock.Now(ctx)
			after = serverTime(t, c)
			if err != nil {
				t.Fatalf("Now: %v", err)
			}
			within(t, "Now", now, before, after)
		})
	}
}

// TestNoClientClock checks that the package's code never reads the local clock:
// time.Now, time.Since and time.Until appear in no non-test file.
func TestNoClientClock(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "time" {
				switch sel.Sel.Name {
				case "Now", "Since", "Until", "After", "Tick", "NewTimer", "NewTicker":
					t.Errorf("%s: time.%s reads the client's clock; scripts must use TIME", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
}
