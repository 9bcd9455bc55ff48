package redisgate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/redisgate"
)

// TestClaimPaths pins which claims the plain transaction answers by itself (no
// script runs on the server) and which run the claim script: only the takeover of
// a lapsed claim and a record in the old hash format. Each answer is checked too,
// so a plain path that judged wrongly fails here as well as in the conformance
// suite.
func TestClaimPaths(t *testing.T) {
	srv := testenv.PrivateRedis(t) // its command stats are this test's alone
	c := newClient(t, srv.Addr())
	s, err := redisgate.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	scripts := func() int {
		eval, sha := evalCalls(t, c)
		return eval + sha
	}
	claim := func(key, token string, lease time.Duration, fp string) (gate.ClaimResult, error) {
		req := gate.ClaimRequest{Key: key, Token: token, Owner: "o", Lease: lease, TTL: time.Hour}
		if fp != "" {
			req.Fingerprint = []byte(fp)
		}
		return s.Claim(ctx, req)
	}
	// Set-up the steps rely on; their own scripts are not counted.
	r, err := claim("done", "t0", time.Minute, "fp")
	if err == nil {
		_, err = s.Complete(ctx, gate.Completion{Key: "done", Fence: r.Record.Fence, TTL: time.Hour, Result: []byte("res")})
	}
	if err == nil {
		r, err = claim("unknown", "t0", time.Minute, "")
	}
	if err == nil {
		_, err = s.MarkUnknown(ctx, "unknown", r.Record.Fence)
	}
	if err == nil {
		_, err = claim("lapsed", "t0", time.Millisecond, "")
	}
	if err == nil {
		_, err = claim("lapsed-own", "t0", time.Millisecond, "")
	}
	if err == nil {
		_, err = claim("warm", "t0", time.Millisecond, "")
	}
	if err != nil {
		t.Fatal(err)
	}
	oldStore{t, c, s}.claim("hash", "t0", time.Hour, "")
	time.Sleep(20 * time.Millisecond) // the 1 ms leases lapse on the server's clock
	// A takeover loads the claim script (EVALSHA, NOSCRIPT, EVAL) before counting.
	if r, err := claim("warm", "t1", time.Minute, ""); err != nil || r.Record.Fence != 2 {
		t.Fatalf("warm-up takeover = %+v, %v", r, err)
	}

	steps := []struct {
		name, key, token, fp string
		want                 gate.ClaimStatus
		wantFence            int64
		wantErr              error
		scripts              int
	}{
		{"absent key", "fresh", "t1", "fp", gate.Won, 1, nil, 0},
		{"live claim of another", "fresh", "t2", "fp", gate.HeldByOther, 1, nil, 0},
		{"live claim of its own", "fresh", "t1", "fp", gate.Won, 1, nil, 0},
		{"live claim, other fingerprint", "fresh", "t2", "fp2", 0, 0, gate.ErrKeyReuse, 0},
		{"done", "done", "t1", "fp", gate.AlreadyDone, 1, nil, 0},
		{"done, other fingerprint", "done", "t1", "fp2", 0, 0, gate.ErrKeyReuse, 0},
		{"unknown", "unknown", "t1", "", gate.Unknown, 1, nil, 0},
		{"lapsed claim of its own", "lapsed-own", "t0", "", gate.Won, 1, nil, 0},
		{"lapsed claim of another: taken over", "lapsed", "t1", "", gate.Won, 2, nil, 1},
		{"old hash format", "hash", "t1", "", gate.HeldByOther, 1, nil, 1},
	}
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		before := scripts()
		res, err := claim(st.key, st.token, time.Minute, st.fp)
		if st.wantErr != nil {
			if !errors.Is(err, st.wantErr) {
				t.Fatalf("%s: Claim error = %v, want %v", st.name, err, st.wantErr)
			}
		} else if err != nil || res.Status != st.want || res.Record.Fence != st.wantFence {
			t.Fatalf("%s: Claim = %v at fence %d, %v; want %v at fence %d", st.name, res.Status, res.Record.Fence, err, st.want, st.wantFence)
		}
		if n := scripts() - before; n != st.scripts {
			t.Errorf("%s: the claim ran %d scripts, want %d", st.name, n, st.scripts)
		}
	}
}
