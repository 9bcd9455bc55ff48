package gatetest

import (
	"errors"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// admin returns b as a gate.Admin or skips the test: the operator's verbs are
// the one optional part of the port.
func admin(t *testing.T, b gate.Backend) gate.Admin {
	t.Helper()
	a, ok := b.(gate.Admin)
	if !ok {
		t.Skip("backend is not a gate.Admin")
	}
	return a
}

var portTests = map[string]func(*testing.T, *env){
	"RenewExtendsLeaseKeepsFence": func(t *testing.T, e *env) {
		c := e.win("k", ShortLease)
		ok, err := e.b.Renew(e.ctx, "k", c.Fence, LongLease, TTL)
		if err != nil || !ok {
			t.Fatalf("Renew = %v, %v; want true", ok, err)
		}
		e.h.Advance(t, Lapse)
		wantFence(t, "renewed", e.expect("k", gate.HeldByOther).Fence, c.Fence)
		if ok, err := e.b.Renew(e.ctx, "k", c.Fence+1, LongLease, TTL); err != nil || ok {
			t.Fatalf("Renew with a stale fence = %v, %v; want false", ok, err)
		}
	},
	"RenewRefusedAfterReclaim": func(t *testing.T, e *env) {
		c := e.win("k", ShortLease)
		e.h.Advance(t, Lapse)
		e.win("k", LongLease)
		if ok, err := e.b.Renew(e.ctx, "k", c.Fence, LongLease, TTL); err != nil || ok {
			t.Fatalf("zombie Renew = %v, %v; want false", ok, err)
		}
	},
	"FailIsTerminalWithResult": func(t *testing.T, e *env) {
		c := e.win("k", LongLease)
		if ok, err := e.b.Fail(e.ctx, gate.Completion{Key: "k", Fence: c.Fence, TTL: TTL, Result: []byte("card declined")}); err != nil || !ok {
			t.Fatalf("Fail = %v, %v; want true", ok, err)
		}
		r := e.expect("k", gate.Failed)
		if r.State != gate.StateFailed || string(r.Result) != "card declined" {
			t.Fatalf("failed record = %s %q", r.State, r.Result)
		}
		if ok, _ := e.b.Fail(e.ctx, gate.Completion{Key: "k", Fence: c.Fence, TTL: TTL}); ok {
			t.Fatal("Fail of a failed record accepted")
		}
	},
	"UnknownRefusesClaimsAndNeverExpires": func(t *testing.T, e *env) {
		c := e.win("k", ShortLease)
		if ok, err := e.b.MarkUnknown(e.ctx, "k", c.Fence+1); err != nil || ok {
			t.Fatalf("MarkUnknown with a stale fence = %v, %v; want false", ok, err)
		}
		if ok, err := e.b.MarkUnknown(e.ctx, "k", c.Fence); err != nil || !ok {
			t.Fatalf("MarkUnknown = %v, %v; want true", ok, err)
		}
		e.h.Advance(t, Lapse)
		if r := e.expect("k", gate.Unknown); !r.ExpiresAt.IsZero() {
			t.Fatalf("unknown record has expires_at %v, want none", r.ExpiresAt)
		}
		if e.complete("k", c.Fence, TTL, nil) {
			t.Fatal("complete of an unknown record accepted")
		}
	},
	"AdvanceFenceNeverLowers": func(t *testing.T, e *env) {
		got, err := e.b.AdvanceFence(e.ctx, "absent", 1000, TTL)
		if err != nil || got != 1000 {
			t.Fatalf("AdvanceFence(absent, 1000) = %d, %v; want 1000", got, err)
		}
		wantFence(t, "claim after advance", e.win("absent", LongLease).Fence, 1001)
		got, err = e.b.AdvanceFence(e.ctx, "absent", 5, TTL)
		if err != nil || got != 1001 {
			t.Fatalf("AdvanceFence(lower) = %d, %v; want 1001 (never lowered)", got, err)
		}
		e.expect("absent", gate.HeldByOther)
	},
	"FenceExhaustion": func(t *testing.T, e *env) {
		if _, err := e.b.AdvanceFence(e.ctx, "k", gate.MaxFence+1, TTL); !errors.Is(err, gate.ErrFenceExhausted) {
			t.Fatalf("AdvanceFence past MaxFence: err = %v, want ErrFenceExhausted", err)
		}
		if _, err := e.b.AdvanceFence(e.ctx, "k", gate.MaxFence-1, TTL); err != nil {
			t.Fatalf("AdvanceFence(MaxFence-1): %v", err)
		}
		wantFence(t, "last token", e.win("k", ShortLease).Fence, gate.MaxFence)
		e.h.Advance(t, Lapse)
		if _, err := e.b.Claim(e.ctx, req("k", LongLease)); !errors.Is(err, gate.ErrFenceExhausted) {
			t.Fatalf("claim past MaxFence: err = %v, want ErrFenceExhausted", err)
		}
	},
	"InspectReadsWithoutChanging": func(t *testing.T, e *env) {
		if _, ok, err := e.b.Inspect(e.ctx, "k"); err != nil || ok {
			t.Fatalf("Inspect(absent) = %v, %v; want false", ok, err)
		}
		c := e.win("k", LongLease)
		r, ok, err := e.b.Inspect(e.ctx, "k")
		if err != nil || !ok || r.Fence != c.Fence || r.State != gate.StateClaimed || r.Owner == "" {
			t.Fatalf("Inspect = %+v, %v, %v", r, ok, err)
		}
		e.expect("k", gate.HeldByOther)
	},
	"RepeatedFinishShowsItsFence": func(t *testing.T, e *env) {
		// The Gate retries a complete or an unknown mark whose answer was
		// lost; a repeat answers false, and Inspect must then show the record
		// finished at the claim's own fence, so the Gate can tell its own
		// earlier commit from a newer holder.
		c := e.win("done", LongLease)
		e.complete("done", c.Fence, TTL, nil)
		if e.complete("done", c.Fence, TTL, nil) {
			t.Fatal("a repeated complete committed again")
		}
		if r, ok, err := e.b.Inspect(e.ctx, "done"); err != nil || !ok || r.State != gate.StateDone || r.Fence != c.Fence {
			t.Fatalf("Inspect after a repeated complete = %+v, %v, %v; want done at fence %d", r, ok, err, c.Fence)
		}
		u := e.win("unknown", LongLease)
		if ok, err := e.b.MarkUnknown(e.ctx, "unknown", u.Fence); err != nil || !ok {
			t.Fatalf("MarkUnknown = %v, %v", ok, err)
		}
		if ok, err := e.b.MarkUnknown(e.ctx, "unknown", u.Fence); err != nil || ok {
			t.Fatalf("a repeated MarkUnknown = %v, %v; want false", ok, err)
		}
		if r, ok, err := e.b.Inspect(e.ctx, "unknown"); err != nil || !ok || r.State != gate.StateUnknown || r.Fence != u.Fence {
			t.Fatalf("Inspect after a repeated mark = %+v, %v, %v; want unknown at fence %d", r, ok, err, u.Fence)
		}
		if ok, err := e.b.MarkUnknown(e.ctx, "done", c.Fence); err != nil || ok {
			t.Fatalf("MarkUnknown of a done record = %v, %v; want false", ok, err)
		}
	},
	"PurgeDeletesOnlyExpired": func(t *testing.T, e *env) {
		p := admin(t, e.b)
		d := e.win("done-short", LongLease)
		e.complete("done-short", d.Fence, ShortLease, nil)
		e.win("live", LongLease)
		u := e.win("unknown", ShortLease)
		if ok, err := e.b.MarkUnknown(e.ctx, "unknown", u.Fence); err != nil || !ok {
			t.Fatalf("MarkUnknown: %v %v", ok, err)
		}
		keep := e.win("done-long", LongLease)
		e.complete("done-long", keep.Fence, TTL, nil)
		e.h.Advance(t, Lapse)
		want := 1
		if deletesAtExpiry(e.h) {
			want = 0 // the store already deleted done-short itself
		}
		n, err := p.Purge(e.ctx, 0)
		if err != nil || n != want {
			t.Fatalf("Purge = %d, %v; want %d", n, err, want)
		}
		e.expect("live", gate.HeldByOther)
		e.expect("unknown", gate.Unknown)
		e.expect("done-long", gate.AlreadyDone)
	},
	"ListUnresolvedOldestFirst": func(t *testing.T, e *env) {
		l := admin(t, e.b)
		for i, k := range []string{"u-old", "u-new"} {
			c := e.win(k, time.Duration(i+1)*time.Minute)
			if ok, err := e.b.MarkUnknown(e.ctx, k, c.Fence); err != nil || !ok {
				t.Fatalf("MarkUnknown(%s): %v %v", k, ok, err)
			}
		}
		e.win("claimed", LongLease)
		got, err := l.ListUnresolved(e.ctx, 0)
		if err != nil || len(got) != 2 || got[0].Key != "u-old" || got[1].Key != "u-new" {
			t.Fatalf("ListUnresolved = %v, %v; want u-old, u-new", keysOf(got), err)
		}
		if got, _ := l.ListUnresolved(e.ctx, 1); len(got) != 1 {
			t.Fatalf("ListUnresolved(limit 1) returned %d", len(got))
		}
	},
	"ResolveAsDoneOrRetry": func(t *testing.T, e *env) {
		rs := admin(t, e.b)
		for _, k := range []string{"to-done", "to-retry"} {
			c := e.win(k, LongLease)
			if ok, err := e.b.MarkUnknown(e.ctx, k, c.Fence); err != nil || !ok {
				t.Fatalf("MarkUnknown(%s): %v %v", k, ok, err)
			}
		}
		if err := rs.Resolve(e.ctx, "to-done", true, TTL); err != nil {
			t.Fatalf("Resolve done: %v", err)
		}
		e.expect("to-done", gate.AlreadyDone)
		if err := rs.Resolve(e.ctx, "to-retry", false, TTL); err != nil {
			t.Fatalf("Resolve retry: %v", err)
		}
		wantFence(t, "claim after resolve-retry", e.win("to-retry", LongLease).Fence, 3)
		if err := rs.Resolve(e.ctx, "to-done", true, TTL); !errors.Is(err, gate.ErrNotUnknown) {
			t.Fatalf("Resolve of a done record: err = %v, want ErrNotUnknown", err)
		}
		if err := rs.Resolve(e.ctx, "absent", true, TTL); !errors.Is(err, gate.ErrNotFound) {
			t.Fatalf("Resolve of an absent key: err = %v, want ErrNotFound", err)
		}
	},
}

func keysOf(rs []gate.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Key
	}
	return out
}
