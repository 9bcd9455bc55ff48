package redisgate_test

import (
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/redisgate"
)

// evalCalls returns how many EVAL and EVALSHA calls the server has run since its
// stats were reset.
func evalCalls(t *testing.T, c redis.UniversalClient) (eval, evalsha int) {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatalf("INFO commandstats: %v", err)
	}
	count := func(cmd string) int {
		m := regexp.MustCompile(`cmdstat_` + cmd + `:calls=(\d+)`).FindStringSubmatch(info)
		if m == nil {
			return 0
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return count("eval"), count("evalsha")
}

// TestScriptCacheFlush shows the scripts run by SHA and survive SCRIPT FLUSH
// between operations: the first call after a flush falls back to EVAL (which
// caches the script again), every other call is a single EVALSHA. A claim the
// plain transaction answers runs no script at all.
func TestScriptCacheFlush(t *testing.T) {
	srv := testenv.PrivateRedis(t) // its stats and script cache are this test's alone
	c := newClient(t, srv.Addr())
	s, err := redisgate.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	flush := func() {
		t.Helper()
		if err := c.ScriptFlush(ctx).Err(); err != nil {
			t.Fatalf("SCRIPT FLUSH: %v", err)
		}
	}
	flush()
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	r := mustClaim(t, s, "k", time.Minute, gate.Won)
	mustClaim(t, s, "k", time.Minute, gate.HeldByOther)
	if eval, sha := evalCalls(t, c); eval != 0 || sha != 0 {
		t.Fatalf("claims ran EVAL %d, EVALSHA %d times; want no script", eval, sha)
	}
	for _, key := range []string{"k", "k2"} { // EVALSHA → NOSCRIPT → EVAL, then EVALSHA
		if key == "k2" {
			r = mustClaim(t, s, key, time.Minute, gate.Won)
		}
		if ok, err := s.Complete(ctx, gate.Completion{Key: key, Fence: r.Fence, TTL: time.Hour}); err != nil || !ok {
			t.Fatalf("Complete after SCRIPT FLUSH = %v, %v", ok, err)
		}
	}
	if eval, sha := evalCalls(t, c); eval != 1 || sha != 2 {
		t.Fatalf("EVAL %d, EVALSHA %d calls; want 1 (the fallback) and 2", eval, sha)
	}
	flush()
	mustClaim(t, s, "k", time.Minute, gate.AlreadyDone)
	flush()
	if _, ok, err := s.Inspect(ctx, "k"); err != nil || !ok {
		t.Fatalf("Inspect after SCRIPT FLUSH = %v, %v", ok, err)
	}
}

// TestServerRestart restarts the private Redis between operations: the scripts
// are loaded again and the store keeps answering. Redis here keeps nothing on
// disk, so a restart loses the records: the late Complete is refused and the key
// starts again at fence 1.
func TestServerRestart(t *testing.T) {
	srv := testenv.PrivateRedis(t)
	c := newClient(t, srv.Addr())
	s, err := redisgate.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := mustClaim(t, s, "k", time.Minute, gate.Won)
	srv.Restart(t)
	if ok, err := s.Complete(ctx, gate.Completion{Key: "k", Fence: r.Fence, TTL: time.Hour}); err != nil || ok {
		t.Fatalf("Complete after a restart that lost the record = %v, %v; want false", ok, err)
	}
	r = mustClaim(t, s, "k", time.Minute, gate.Won)
	if r.Fence != 1 {
		t.Fatalf("fence after restart = %d, want 1", r.Fence)
	}
	srv.Restart(t)
	if got, err := s.AdvanceFence(ctx, "k", 10, time.Hour); err != nil || got != 10 {
		t.Fatalf("AdvanceFence after restart = %d, %v", got, err)
	}
	if r := mustClaim(t, s, "k", time.Minute, gate.Won); r.Fence != 11 {
		t.Fatalf("fence after advance = %d, want 11", r.Fence)
	}
}
