package redisgate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/redisgate"
)

// TestClaimOnFullServer fills a private server under noeviction: every claim
// fails closed (a duplicate of a done record too, as its SET is a write), and
// the error names the cause, the OOM, not only the aborted transaction.
func TestClaimOnFullServer(t *testing.T) {
	srv := testenv.PrivateRedis(t)
	c := newClient(t, srv.Addr())
	s, err := redisgate.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	done := mustClaim(t, s, "done", time.Minute, gate.Won)
	if ok, err := s.Complete(ctx, gate.Completion{Key: "done", Fence: done.Fence, TTL: time.Hour}); !ok || err != nil {
		t.Fatalf("Complete = %v, %v", ok, err)
	}
	mustClaim(t, s, "held", time.Minute, gate.Won)
	for _, kv := range [][2]string{{"maxmemory-policy", "noeviction"}, {"maxmemory", "1"}} {
		if err := c.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = c.ConfigSet(ctx, "maxmemory", "0").Err() })
	for _, k := range []string{"done", "held", "fresh"} {
		res, err := s.Claim(ctx, claimReq(k, time.Minute))
		if err == nil {
			t.Errorf("claim %q on a full server = %v at fence %d, want an error", k, res.Status, res.Record.Fence)
		} else if !strings.Contains(err.Error(), "OOM") {
			t.Errorf("claim %q on a full server: error %q does not name the OOM", k, err)
		}
	}
}

// TestPersistedClaimIsLapsed removes a live claim's TTL from outside, which
// doc.go ("Expiry") says makes it claimable at once: the claim takes it over as
// the claim script does, instead of answering held by a lease dated 1970 that
// never lapses on a key that never expires.
func TestPersistedClaimIsLapsed(t *testing.T) {
	s, c := newStore(t)
	ctx := context.Background()
	mustClaim(t, s, "k", time.Minute, gate.Won)
	if err := c.Persist(ctx, s.RedisKey("k")).Err(); err != nil {
		t.Fatal(err)
	}
	rec := mustClaim(t, s, "k", time.Minute, gate.Won)
	if rec.Fence != 2 {
		t.Errorf("takeover of a persisted claim at fence %d, want 2", rec.Fence)
	}
	if at := c.PExpireTime(ctx, s.RedisKey("k")).Val(); at < 0 {
		t.Errorf("the taken-over record has no TTL (%v)", at)
	}
}
