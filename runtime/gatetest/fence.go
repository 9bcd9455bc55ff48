package gatetest

import (
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
)

var fenceTests = map[string]func(*testing.T, *env){
	"NeverDecreasesAcrossTransitions": func(t *testing.T, e *env) {
		last := int64(0)
		check := func(what string, f int64) {
			t.Helper()
			if f < last {
				t.Fatalf("%s: fence went down from %d to %d", what, last, f)
			}
			last = f
		}
		r := e.win("k", LongLease)
		check("claim", r.Fence)
		e.release("k", r.Fence)
		r = e.win("k", ShortLease)
		check("claim after release", r.Fence)
		e.h.Advance(t, Lapse)
		r = e.win("k", LongLease)
		check("reclaim", r.Fence)
		e.complete("k", r.Fence, ShortLease, nil)
		check("done", e.expect("k", gate.AlreadyDone).Fence)
		e.h.Advance(t, Lapse)
		r = e.win("k", LongLease)
		if deletesAtExpiry(e.h) {
			wantFence(t, "claim after the store deleted the expired record", r.Fence, 1)
			return
		}
		check("claim after done expired", r.Fence)
		wantFence(t, "after claim, release, claim, reclaim, done, expiry, claim", r.Fence, 5)
	},
	"RecreatedAfterPurgeStartsAtOne": func(t *testing.T, e *env) {
		p := admin(t, e.b)
		r := e.win("k", LongLease)
		e.complete("k", r.Fence, ShortLease, nil)
		e.h.Advance(t, Lapse)
		if _, err := p.Purge(e.ctx, 0); err != nil {
			t.Fatalf("Purge: %v", err)
		}
		wantFence(t, "claim after physical deletion", e.win("k", LongLease).Fence, 1)
	},
}
