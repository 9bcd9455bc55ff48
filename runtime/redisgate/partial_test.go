package redisgate_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// TestPartialHashIsLapsed: a hash under the prefix that lacks fields, or holds
// non-numbers in them (a partial or foreign write), never makes a script raise.
// A claim treats it as lapsed and takes it over with fence + 1 (a missing fence
// counts as 0), and the new record carries nothing of the old hash.
func TestPartialHashIsLapsed(t *testing.T) {
	s, c := newStore(t)
	ctx := context.Background()
	future := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
	tests := []struct {
		name      string
		fields    []string
		wantFence int64
	}{
		{"claimed without lease or expiry", []string{"state", "claimed", "fence", "3"}, 4},
		{"claimed without lease", []string{"state", "claimed", "fence", "3", "expires_at", future}, 4},
		{"claimed with a non-numeric lease", []string{"state", "claimed", "fence", "2", "lease_expiry", "soon", "expires_at", future}, 3},
		{"claimed with a non-numeric expiry", []string{"state", "claimed", "fence", "5", "lease_expiry", "x", "expires_at", "later"}, 6},
		{"claimed without fence", []string{"state", "claimed", "expires_at", future}, 1},
		{"fence only", []string{"fence", "7"}, 8},
		{"no state, leftover result", []string{"result", "old", "done_at", "1", "claim_token", "t"}, 1},
		{"unknown-looking state", []string{"state", "bogus", "fence", "9"}, 10},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := "partial-" + strconv.Itoa(i)
			if err := c.HSet(ctx, s.RedisKey(key), tt.fields).Err(); err != nil {
				t.Fatal(err)
			}
			rec := mustClaim(t, s, key, time.Minute, gate.Won)
			if rec.Fence != tt.wantFence {
				t.Fatalf("claim over %q: fence %d, want %d", tt.fields, rec.Fence, tt.wantFence)
			}
			got, ok, err := s.Inspect(ctx, key)
			if err != nil || !ok {
				t.Fatalf("Inspect = %v, %v", ok, err)
			}
			if got.State != gate.StateClaimed || got.Fence != tt.wantFence || got.Result != nil || !got.DoneAt.IsZero() ||
				got.ClaimToken != rec.ClaimToken || got.LeaseExpiry.IsZero() {
				t.Fatalf("record after the takeover = %+v", got)
			}
			if ok, err := s.Complete(ctx, gate.Completion{Key: key, Fence: rec.Fence, TTL: time.Hour}); err != nil || !ok {
				t.Fatalf("Complete = %v, %v", ok, err)
			}
		})
	}
	if n := checkTTLs(t, c, s.Prefix()); n != len(tests) {
		t.Fatalf("checked %d keys, want %d", n, len(tests))
	}
}

// TestPartialHashEveryScript runs every other script on a partial hash: none
// raises, and each answers as it would for the fields that are there.
func TestPartialHashEveryScript(t *testing.T) {
	s, c := newStore(t)
	ctx := context.Background()
	future := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
	set := func(t *testing.T, key string, fields ...string) {
		t.Helper()
		if err := c.HSet(ctx, s.RedisKey(key), fields).Err(); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("renew over a non-numeric expiry", func(t *testing.T) {
		set(t, "renew", "state", "claimed", "fence", "2", "lease_expiry", future, "expires_at", "later")
		if ok, err := s.Renew(ctx, "renew", 2, time.Minute, time.Hour); err != nil || !ok {
			t.Fatalf("Renew = %v, %v; want true", ok, err)
		}
	})
	t.Run("resolve an unknown record without fence", func(t *testing.T) {
		set(t, "resolve", "state", "unknown")
		if err := s.Resolve(ctx, "resolve", false, time.Hour); err != nil {
			t.Fatalf("Resolve: %v", err)
		}
		mustClaim(t, s, "resolve", time.Minute, gate.Won)
	})
	t.Run("advance a non-numeric fence", func(t *testing.T) {
		set(t, "advance", "state", "claimed", "fence", "x")
		if f, err := s.AdvanceFence(ctx, "advance", 5, time.Hour); err != nil || f != 5 {
			t.Fatalf("AdvanceFence = %d, %v; want 5", f, err)
		}
		if rec := mustClaim(t, s, "advance", time.Minute, gate.Won); rec.Fence != 6 {
			t.Fatalf("claim after the advance: fence %d, want 6", rec.Fence)
		}
	})
	t.Run("advance a hash without fence keeps its other fields", func(t *testing.T) {
		set(t, "advance-nofence", "state", "done", "expires_at", future)
		if f, err := s.AdvanceFence(ctx, "advance-nofence", 4, time.Hour); err != nil || f != 4 {
			t.Fatalf("AdvanceFence = %d, %v; want 4", f, err)
		}
		mustClaim(t, s, "advance-nofence", time.Minute, gate.AlreadyDone)
	})
	t.Run("fenced writes on a hash without fence are refused", func(t *testing.T) {
		set(t, "stale", "state", "claimed")
		for name, op := range map[string]func() (bool, error){
			"Complete":    func() (bool, error) { return s.Complete(ctx, gate.Completion{Key: "stale", Fence: 1, TTL: time.Hour}) },
			"Release":     func() (bool, error) { return s.Release(ctx, "stale", 1) },
			"Renew":       func() (bool, error) { return s.Renew(ctx, "stale", 1, time.Minute, time.Hour) },
			"MarkUnknown": func() (bool, error) { return s.MarkUnknown(ctx, "stale", 1) },
		} {
			if ok, err := op(); err != nil || ok {
				t.Errorf("%s = %v, %v; want false, nil", name, ok, err)
			}
		}
		if _, _, err := s.Inspect(ctx, "stale"); err != nil {
			t.Errorf("Inspect: %v", err)
		}
	})
}
