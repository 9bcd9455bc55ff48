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
