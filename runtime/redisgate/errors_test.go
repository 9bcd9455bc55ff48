package redisgate_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/redisgate"
)

var sentinels = []error{
	gate.ErrKeyReuse, gate.ErrFenceExhausted, gate.ErrNotFound, gate.ErrNotUnknown,
}

func TestUnreachableServer(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + itoa(testenv.FreePort(t)), MaxRetries: -1}) // nothing listens
	defer c.Close()
	s, err := redisgate.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Claim(context.Background(), claimReq("k", time.Minute))
	if err == nil || !strings.Contains(err.Error(), `redisgate: claim "k"`) {
		t.Fatalf("Claim on a dead server: err = %v, want one naming the operation and key", err)
	}
	for _, e := range sentinels {
		if errors.Is(err, e) {
			t.Fatalf("transport error %v matches %v", err, e)
		}
	}
}

func TestContextErrorsAreNotWrapped(t *testing.T) {
	s, _ := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Claim(ctx, claimReq("k", time.Minute)); err != context.Canceled {
		t.Fatalf("Claim with a cancelled context: err = %#v, want context.Canceled itself", err)
	}
	if _, err := s.ListUnresolved(ctx, 0); err != context.Canceled {
		t.Fatalf("ListUnresolved with a cancelled context: err = %#v, want context.Canceled itself", err)
	}
}

func TestKeyReuseCarriesRecord(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	a := claimReq("k", time.Minute)
	a.Fingerprint = []byte("payload-a\x00\xff")
	if _, err := s.Claim(ctx, a); err != nil {
		t.Fatal(err)
	}
	b := claimReq("k", time.Minute)
	b.Fingerprint = []byte("payload-b")
	res, err := s.Claim(ctx, b)
	if !errors.Is(err, gate.ErrKeyReuse) || !bytes.Equal(res.Record.Fingerprint, a.Fingerprint) || res.Record.Fence != 1 {
		t.Fatalf("Claim = %+v, %v; want ErrKeyReuse with the stored record", res.Record, err)
	}
	// A claim without a fingerprint is not a reuse.
	if res, err := s.Claim(ctx, claimReq("k", time.Minute)); err != nil || res.Status != gate.HeldByOther {
		t.Fatalf("Claim without fingerprint = %v, %v", res.Status, err)
	}
}

// TestFenceExhaustedEverywhere covers the verbs besides Claim that would move a
// fence past gate.MaxFence: Release and a retrying Resolve refuse.
func TestFenceExhaustedEverywhere(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	for _, k := range []string{"release", "resolve"} {
		if _, err := s.AdvanceFence(ctx, k, gate.MaxFence-1, time.Hour); err != nil {
			t.Fatal(err)
		}
		if r := mustClaim(t, s, k, time.Minute, gate.Won); r.Fence != gate.MaxFence {
			t.Fatalf("fence = %d, want MaxFence", r.Fence)
		}
	}
	if ok, err := s.Release(ctx, "release", gate.MaxFence); ok || !errors.Is(err, gate.ErrFenceExhausted) {
		t.Fatalf("Release at MaxFence = %v, %v; want ErrFenceExhausted", ok, err)
	}
	if ok, err := s.MarkUnknown(ctx, "resolve", gate.MaxFence); err != nil || !ok {
		t.Fatalf("MarkUnknown = %v, %v", ok, err)
	}
	if err := s.Resolve(ctx, "resolve", false, time.Hour); !errors.Is(err, gate.ErrFenceExhausted) {
		t.Fatalf("Resolve(retry) at MaxFence: err = %v, want ErrFenceExhausted", err)
	}
	if err := s.Resolve(ctx, "resolve", true, time.Hour); err != nil {
		t.Fatalf("Resolve(done) at MaxFence: %v", err)
	}
	mustClaim(t, s, "resolve", time.Minute, gate.AlreadyDone)
}

// TestForeignKeyUnderPrefix shows a key under the prefix that is neither a record
// nor an old-format hash is an error, not a record and not a panic, and is left
// as it is.
func TestForeignKeyUnderPrefix(t *testing.T) {
	s, c := newStore(t)
	ctx := context.Background()
	for _, v := range []string{"x", "claimed", "og1 claimed 1 2 3", "og1 done 1 2  0 0 9\nshort", "og1 bogus 1 2  0 0 0\n",
		"og1 done 1 2  9223372036854775807 1 0\nabc", "og1 claimed 1 999999999  0 0 9\nshort",
		"og1 claimed 1 999999999  9223372036854775807 1 0\nabc"} {
		if err := c.Set(ctx, s.RedisKey("k"), v, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		_, err := s.Claim(ctx, claimReq("k", time.Minute))
		if err == nil || !(redis.HasErrorPrefix(errors.Unwrap(err), "WRONGTYPE") || strings.Contains(err.Error(), "not an oncegate record")) {
			t.Fatalf("Claim over the string %q: err = %v, want not a record", v, err)
		}
		if _, _, err := s.Inspect(ctx, "k"); err == nil {
			t.Fatalf("Inspect of the string %q: no error", v)
		}
		if got, _ := c.Get(ctx, s.RedisKey("k")).Result(); got != v {
			t.Fatalf("the string %q became %q", v, got)
		}
	}
	if err := c.Del(ctx, s.RedisKey("k")).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.RPush(ctx, s.RedisKey("k"), "x").Err(); err != nil {
		t.Fatal(err)
	}
	_, err := s.Claim(ctx, claimReq("k", time.Minute))
	if err == nil || !redis.HasErrorPrefix(errors.Unwrap(err), "WRONGTYPE") {
		t.Fatalf("Claim over a list key: err = %v, want WRONGTYPE", err)
	}
	if got, err := s.ListUnresolved(ctx, 0); err != nil || len(got) != 0 {
		t.Fatalf("ListUnresolved = %v, %v; want none", keysOf(got), err)
	}
}

// TestReleasedClaimKeepsFingerprint: a claim without a fingerprint after a
// release inherits the stored one, and its record says so.
func TestReleasedClaimKeepsFingerprint(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	rq := claimReq("k", time.Minute)
	rq.Fingerprint = []byte("a b\x00c")
	if _, err := s.Claim(ctx, rq); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Release(ctx, "k", 1); err != nil || !ok {
		t.Fatalf("Release = %v, %v", ok, err)
	}
	res, err := s.Claim(ctx, claimReq("k", time.Minute))
	if err != nil || res.Status != gate.Won || res.Record.Fence != 3 || !bytes.Equal(res.Record.Fingerprint, rq.Fingerprint) {
		t.Fatalf("Claim = %v fence %d fingerprint %q, %v; want won, 3, %q", res.Status, res.Record.Fence, res.Record.Fingerprint, err, rq.Fingerprint)
	}
}

func TestResultAndRecordRoundTrip(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	rq := claimReq("k", time.Minute)
	rq.Owner = "worker-7"
	rq.Fingerprint = []byte{0, ' ', 2, ' '} // spaces: the claim reply is space-separated
	won, err := s.Claim(ctx, rq)
	if err != nil {
		t.Fatal(err)
	}
	if won.Record.ClaimToken != rq.Token || won.Record.Owner != "worker-7" || won.Record.Key != "k" ||
		won.Record.State != gate.StateClaimed || !bytes.Equal(won.Record.Fingerprint, rq.Fingerprint) ||
		!won.Record.ExpiresAt.Equal(won.Record.LeaseExpiry.Add(time.Hour)) || !won.Record.DoneAt.IsZero() {
		t.Fatalf("won record = %+v", won.Record)
	}
	result := bytes.Repeat([]byte("\x00\xffé"), 100_000) // 500 KB, binary
	if ok, err := s.Complete(ctx, gate.Completion{Key: "k", Fence: 1, TTL: time.Hour, Result: result}); err != nil || !ok {
		t.Fatalf("Complete = %v, %v", ok, err)
	}
	res, err := s.Claim(ctx, claimReq("k", time.Minute))
	if err != nil || res.Status != gate.AlreadyDone {
		t.Fatalf("Claim = %v, %v", res.Status, err)
	}
	r := res.Record
	if !bytes.Equal(r.Result, result) || r.State != gate.StateDone || r.DoneAt.IsZero() ||
		!r.ExpiresAt.Equal(r.DoneAt.Add(time.Hour)) || !bytes.Equal(r.Fingerprint, rq.Fingerprint) || r.Owner != "worker-7" {
		t.Fatalf("done record: state %s done_at %v expires_at %v owner %q result %d bytes", r.State, r.DoneAt, r.ExpiresAt, r.Owner, len(r.Result))
	}
}
