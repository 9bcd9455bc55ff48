package redisgate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/redisgate"
)

// oldScript is one of the scripts of the old hash format, kept verbatim in
// testdata/v0, built the way that code built them.
func oldScript(t *testing.T, op string) *redis.Script {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "v0", name+".lua"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return redis.NewScript(fmt.Sprintf("local MAX_FENCE = %d\n%s\n%s", gate.MaxFence, read("prelude"), read(op)))
}

// oldStore writes records as the code before the string format did.
type oldStore struct {
	t *testing.T
	c *redis.Client
	s *redisgate.Store
}

func (o oldStore) run(op, key string, args ...any) any {
	o.t.Helper()
	v, err := oldScript(o.t, op).Run(context.Background(), o.c, []string{o.s.RedisKey(key)}, args...).Result()
	if err != nil {
		o.t.Fatalf("old %s %q: %v", op, key, err)
	}
	return v
}

func (o oldStore) claim(key, token string, lease time.Duration, fp string) {
	o.t.Helper()
	if _, ok := o.run("claim", key, token, "old-owner", lease.Milliseconds(), time.Hour.Milliseconds(), fp).(string); !ok {
		o.t.Fatalf("old claim %q did not win", key)
	}
	if typ := o.c.Type(context.Background(), o.s.RedisKey(key)).Val(); typ != "hash" {
		o.t.Fatalf("old claim wrote a %s", typ)
	}
}

func (o oldStore) complete(key string, result string) {
	o.t.Helper()
	if n, _ := o.run("finish", key, "1", time.Hour.Milliseconds(), "done", result).(int64); n != 1 {
		o.t.Fatalf("old complete %q refused", key)
	}
}

// TestOldHashRecords: records written by the old hash-format scripts (a rolling
// deploy's older instances) are read and handled by this code: every operation
// answers as it would on the same record in the new format, a claim that takes
// the key over writes the new format, and Inspect and ListUnresolved read both.
func TestOldHashRecords(t *testing.T) {
	s, c := newStore(t)
	ctx := context.Background()
	old := oldStore{t, c, s}
	typeOf := func(key string) string { return c.Type(ctx, s.RedisKey(key)).Val() }

	t.Run("held, then completed and inspected", func(t *testing.T) {
		old.claim("held", "tok-old", time.Hour, "fp")
		res, err := s.Claim(ctx, gate.ClaimRequest{Key: "held", Token: "tok-new", Owner: "new", Lease: time.Minute, TTL: time.Hour})
		if err != nil || res.Status != gate.HeldByOther || res.Record.Owner != "old-owner" || res.Record.Fence != 1 ||
			res.Record.ClaimToken != "tok-old" || string(res.Record.Fingerprint) != "fp" {
			t.Fatalf("Claim = %v %+v, %v; want held by old-owner at fence 1", res.Status, res.Record, err)
		}
		if ok, err := s.Complete(ctx, gate.Completion{Key: "held", Fence: 1, TTL: time.Hour, Result: []byte("r\x00")}); err != nil || !ok {
			t.Fatalf("Complete = %v, %v", ok, err)
		}
		rec, ok, err := s.Inspect(ctx, "held")
		if err != nil || !ok || rec.State != gate.StateDone || string(rec.Result) != "r\x00" || rec.DoneAt.IsZero() ||
			rec.Owner != "old-owner" || string(rec.Fingerprint) != "fp" {
			t.Fatalf("Inspect = %+v, %v, %v", rec, ok, err)
		}
		res, err = s.Claim(ctx, gate.ClaimRequest{Key: "held", Token: "tok-3", Lease: time.Minute, TTL: time.Hour})
		if err != nil || res.Status != gate.AlreadyDone || string(res.Record.Result) != "r\x00" {
			t.Fatalf("Claim after Complete = %v %+v, %v; want already done", res.Status, res.Record, err)
		}
		if typ := typeOf("held"); typ != "hash" {
			t.Fatalf("finishing an old record rewrote it as a %s", typ)
		}
	})
	t.Run("done by old code", func(t *testing.T) {
		old.claim("done", "tok-old", time.Hour, "fp")
		old.complete("done", "res")
		res, err := s.Claim(ctx, gate.ClaimRequest{Key: "done", Token: "t", Lease: time.Minute, TTL: time.Hour, Fingerprint: []byte("fp")})
		if err != nil || res.Status != gate.AlreadyDone || string(res.Record.Result) != "res" {
			t.Fatalf("Claim = %v %+v, %v; want already done", res.Status, res.Record, err)
		}
		if _, err := s.Claim(ctx, gate.ClaimRequest{Key: "done", Token: "t", Lease: time.Minute, TTL: time.Hour, Fingerprint: []byte("other")}); err == nil {
			t.Fatal("Claim with another fingerprint: no key reuse error")
		}
	})
	t.Run("re-affirmed by its token", func(t *testing.T) {
		old.claim("retry", "tok-same", time.Hour, "")
		res, err := s.Claim(ctx, gate.ClaimRequest{Key: "retry", Token: "tok-same", Lease: time.Minute, TTL: time.Hour})
		if err != nil || res.Status != gate.Won || res.Record.Fence != 1 {
			t.Fatalf("Claim = %v %+v, %v; want won at fence 1", res.Status, res.Record, err)
		}
	})
	t.Run("lapsed, taken over in the new format", func(t *testing.T) {
		old.claim("lapsed", "tok-old", 0, "fp")
		res, err := s.Claim(ctx, gate.ClaimRequest{Key: "lapsed", Token: "tok-new", Owner: "new", Lease: time.Minute, TTL: time.Hour})
		if err != nil || res.Status != gate.Won || res.Record.Fence != 2 || string(res.Record.Fingerprint) != "fp" {
			t.Fatalf("Claim = %v %+v, %v; want won at fence 2 keeping the fingerprint", res.Status, res.Record, err)
		}
		if typ := typeOf("lapsed"); typ != "string" {
			t.Fatalf("a new claim over an old record left a %s", typ)
		}
		rec, ok, err := s.Inspect(ctx, "lapsed")
		if err != nil || !ok || rec.Fence != 2 || rec.Owner != "new" || rec.ClaimToken != "tok-new" || !rec.LeaseExpiry.Equal(res.Record.LeaseExpiry) {
			t.Fatalf("Inspect = %+v, %v, %v; want the claim %+v", rec, ok, err, res.Record)
		}
		if ok, err := s.Complete(ctx, gate.Completion{Key: "lapsed", Fence: 2, TTL: time.Hour}); err != nil || !ok {
			t.Fatalf("Complete = %v, %v", ok, err)
		}
	})
	t.Run("renew, release, advance", func(t *testing.T) {
		old.claim("ops", "tok-old", time.Minute, "")
		if ok, err := s.Renew(ctx, "ops", 1, time.Hour, time.Hour); err != nil || !ok {
			t.Fatalf("Renew = %v, %v", ok, err)
		}
		if ok, err := s.Release(ctx, "ops", 1); err != nil || !ok {
			t.Fatalf("Release = %v, %v", ok, err)
		}
		if f, err := s.AdvanceFence(ctx, "ops", 7, time.Hour); err != nil || f != 7 {
			t.Fatalf("AdvanceFence = %d, %v; want 7", f, err)
		}
		if rec := mustClaim(t, s, "ops", time.Minute, gate.Won); rec.Fence != 8 {
			t.Fatalf("claim after the advance: fence %d, want 8", rec.Fence)
		}
	})
	t.Run("unknown, listed with new ones and resolved", func(t *testing.T) {
		for i := range 2 {
			old.claim("old-unknown-"+strconv.Itoa(i), "tok", time.Hour, "")
			if n, _ := old.run("unknown", "old-unknown-"+strconv.Itoa(i), "1").(int64); n != 1 {
				t.Fatal("old mark unknown refused")
			}
		}
		if ok, err := s.MarkUnknown(ctx, "old-unknown-1", 1); err != nil || ok {
			t.Fatalf("MarkUnknown of an unknown record = %v, %v; want false", ok, err)
		}
		rec := mustClaim(t, s, "new-unknown", time.Hour, gate.Won)
		if ok, err := s.MarkUnknown(ctx, "new-unknown", rec.Fence); err != nil || !ok {
			t.Fatalf("MarkUnknown = %v, %v", ok, err)
		}
		got, err := s.ListUnresolved(ctx, 0)
		if err != nil || len(got) != 3 {
			t.Fatalf("ListUnresolved = %v, %v; want 3", keysOf(got), err)
		}
		mustClaim(t, s, "old-unknown-0", time.Minute, gate.Unknown)
		if err := s.Resolve(ctx, "old-unknown-0", false, time.Hour); err != nil {
			t.Fatalf("Resolve: %v", err)
		}
		if rec := mustClaim(t, s, "old-unknown-0", time.Minute, gate.Won); rec.Fence != 3 { // the resolve made a lapsed claim at 2
			t.Fatalf("claim after the resolve: fence %d, want 3", rec.Fence)
		}
		if err := s.Resolve(ctx, "old-unknown-1", true, time.Hour); err != nil {
			t.Fatalf("Resolve as done: %v", err)
		}
		mustClaim(t, s, "old-unknown-1", time.Minute, gate.AlreadyDone)
		if err := s.Resolve(ctx, "new-unknown", true, time.Hour); err != nil {
			t.Fatalf("Resolve as done: %v", err)
		}
	})
	t.Run("old code fails closed on a new record", func(t *testing.T) {
		// The rollout rule (docs/deploy.md): an older instance's script on a key
		// in the new format errors (WRONGTYPE), so its claim fails and the
		// delivery is retried; it never runs a body or overwrites the record.
		rec := mustClaim(t, s, "new", time.Hour, gate.Won)
		for _, op := range []struct {
			name string
			args []any
		}{
			{"claim", []any{"tok-old", "old-owner", 1000, 1000, ""}},
			{"finish", []any{"1", 1000, "done", ""}},
			{"inspect", nil},
		} {
			_, err := oldScript(t, op.name).Run(ctx, c, []string{s.RedisKey("new")}, op.args...).Result()
			if !redis.HasErrorPrefix(err, "WRONGTYPE") && !strings.Contains(fmt.Sprint(err), "WRONGTYPE") {
				t.Fatalf("old %s on a new record: err = %v, want WRONGTYPE", op.name, err)
			}
		}
		if got, ok, err := s.Inspect(ctx, "new"); err != nil || !ok || got.Fence != rec.Fence || got.State != gate.StateClaimed {
			t.Fatalf("Inspect after the old scripts = %+v, %v, %v", got, ok, err)
		}
	})
	checkTTLs(t, c, s.Prefix())
}
