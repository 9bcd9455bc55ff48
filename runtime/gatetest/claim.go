package gatetest

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

var claimTests = map[string]func(*testing.T, *env){
	"AbsentIsWonWithFenceOne": func(t *testing.T, e *env) {
		r := e.win("k", LongLease)
		wantFence(t, "fresh claim", r.Fence, 1)
		if r.State != gate.StateClaimed {
			t.Fatalf("state = %s, want claimed", r.State)
		}
		if !r.ExpiresAt.After(r.LeaseExpiry) {
			t.Fatalf("expires_at %v not after lease_expiry %v", r.ExpiresAt, r.LeaseExpiry)
		}
	},
	"LiveLeaseIsHeldByOther": func(t *testing.T, e *env) {
		e.win("k", LongLease)
		r := e.expect("k", gate.HeldByOther)
		wantFence(t, "held", r.Fence, 1)
	},
	"LapsedLeaseIsWonWithFencePlusOne": func(t *testing.T, e *env) {
		e.win("k", ShortLease)
		e.h.Advance(t, Lapse)
		r := e.win("k", LongLease)
		wantFence(t, "reclaim", r.Fence, 2)
	},
	"ZeroLeaseIsAlreadyLapsed": func(t *testing.T, e *env) {
		first := e.win("k", 0)
		wantFence(t, "zero-lease claim", first.Fence, 1)
		r := e.win("k", LongLease)
		wantFence(t, "claim after zero lease", r.Fence, 2)
	},
	"SameTokenReaffirmsClaim": func(t *testing.T, e *env) {
		rq := req("k", LongLease)
		first := e.claim(rq)
		again := e.claim(rq)
		if again.Status != gate.Won {
			t.Fatalf("retried claim = %v, want won (re-affirmed)", again.Status)
		}
		wantFence(t, "re-affirmed claim", again.Record.Fence, first.Record.Fence)
		if !e.complete("k", first.Record.Fence, TTL, nil) {
			t.Fatal("complete after re-affirmed claim refused")
		}
	},
	"DoneIsAlreadyDoneWithResult": func(t *testing.T, e *env) {
		r := e.win("k", LongLease)
		result := []byte("order\x00#42\xff")
		if !e.complete("k", r.Fence, TTL, result) {
			t.Fatal("complete refused")
		}
		d := e.expect("k", gate.AlreadyDone)
		if d.State != gate.StateDone || !bytes.Equal(d.Result, result) {
			t.Fatalf("done record = state %s result %q, want done %q", d.State, d.Result, result)
		}
		wantFence(t, "done", d.Fence, r.Fence)
	},
	"ExpiredDoneIsWonWithFencePlusOne": func(t *testing.T, e *env) {
		r := e.win("k", LongLease)
		e.complete("k", r.Fence, ShortLease, nil)
		e.h.Advance(t, Lapse)
		n := e.win("k", LongLease)
		want := r.Fence + 1
		if deletesAtExpiry(e.h) {
			want = 1 // the store deleted the expired record; this is a fresh one
		}
		wantFence(t, "claim after done expired", n.Fence, want)
	},
	"FingerprintMismatchIsKeyReuse": func(t *testing.T, e *env) {
		rq := req("k", LongLease)
		rq.Fingerprint = []byte("payload-a")
		e.claim(rq)
		for _, stage := range []string{"claimed", "done"} {
			other := req("k", LongLease)
			other.Fingerprint = []byte("payload-b")
			if _, err := e.b.Claim(e.ctx, other); !errors.Is(err, gate.ErrKeyReuse) {
				t.Fatalf("%s: claim with another fingerprint: err = %v, want ErrKeyReuse", stage, err)
			}
			e.complete("k", 1, TTL, nil)
		}
		same := req("k", LongLease)
		same.Fingerprint = []byte("payload-a")
		if res := e.claim(same); res.Status != gate.AlreadyDone {
			t.Fatalf("same fingerprint after done = %v, want already-done", res.Status)
		}
	},
	"FingerprintSurvivesRelease": func(t *testing.T, e *env) {
		rq := req("k", LongLease)
		rq.Fingerprint = []byte("payload-a")
		e.claim(rq)
		e.release("k", 1)
		other := req("k", LongLease)
		other.Fingerprint = []byte("payload-b")
		if _, err := e.b.Claim(e.ctx, other); !errors.Is(err, gate.ErrKeyReuse) {
			t.Fatalf("claim with another fingerprint after release: err = %v, want ErrKeyReuse", err)
		}
	},
	"LeaseExpiryFollowsLease": func(t *testing.T, e *env) {
		a := e.win("a", time.Minute)
		b := e.win("b", time.Hour)
		if d := b.LeaseExpiry.Sub(a.LeaseExpiry); d < 58*time.Minute || d > 60*time.Minute {
			t.Fatalf("lease expiries differ by %v, want about 59m", d)
		}
	},
}
