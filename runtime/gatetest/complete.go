package gatetest

import (
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
)

var completeTests = map[string]func(*testing.T, *env){
	"MatchingFenceCommits": func(t *testing.T, e *env) {
		r := e.win("k", LongLease)
		if !e.complete("k", r.Fence, TTL, nil) {
			t.Fatal("complete with the claim's fence refused")
		}
		e.expect("k", gate.AlreadyDone)
	},
	"StaleFenceIsRefused": func(t *testing.T, e *env) {
		r := e.win("k", LongLease)
		if e.complete("k", r.Fence+1, TTL, nil) || e.complete("k", r.Fence-1, TTL, nil) {
			t.Fatal("complete with a wrong fence committed")
		}
		e.expect("k", gate.HeldByOther)
	},
	"AbsentKeyIsRefused": func(t *testing.T, e *env) {
		if e.complete("never-claimed", 1, TTL, nil) {
			t.Fatal("complete of an absent key committed")
		}
	},
	"LapsedUnreclaimedHolderCommits": func(t *testing.T, e *env) {
		r := e.win("k", ShortLease)
		e.h.Advance(t, Lapse)
		if !e.complete("k", r.Fence, TTL, nil) {
			t.Fatal("late complete of a lapsed but un-reclaimed holder refused; ownership is the fence, not the clock")
		}
		e.expect("k", gate.AlreadyDone)
	},
	"ZombieCannotCompleteAfterReclaim": func(t *testing.T, e *env) {
		zombie := e.win("k", ShortLease)
		e.h.Advance(t, Lapse)
		fresh := e.win("k", LongLease)
		if e.complete("k", zombie.Fence, TTL, nil) {
			t.Fatal("zombie completed after a reclaim")
		}
		if e.release("k", zombie.Fence) {
			t.Fatal("zombie released after a reclaim")
		}
		if !e.complete("k", fresh.Fence, TTL, nil) {
			t.Fatal("new holder's complete refused")
		}
	},
	"DoneCannotCompleteTwice": func(t *testing.T, e *env) {
		r := e.win("k", LongLease)
		e.complete("k", r.Fence, TTL, []byte("first"))
		if e.complete("k", r.Fence, TTL, []byte("second")) {
			t.Fatal("a done record completed again")
		}
		if d := e.expect("k", gate.AlreadyDone); string(d.Result) != "first" {
			t.Fatalf("result = %q, want first", d.Result)
		}
	},
}

var releaseTests = map[string]func(*testing.T, *env){
	"ReleaseAdvancesFenceAndFreesKey": func(t *testing.T, e *env) {
		r := e.win("k", LongLease)
		if !e.release("k", r.Fence) {
			t.Fatal("release refused")
		}
		n := e.win("k", LongLease)
		wantFence(t, "claim after release", n.Fence, r.Fence+2)
	},
	"ReleasedClaimCanNeverComplete": func(t *testing.T, e *env) {
		r := e.win("k", LongLease)
		e.release("k", r.Fence)
		if e.complete("k", r.Fence, TTL, nil) {
			t.Fatal("a released claim completed")
		}
		if e.release("k", r.Fence) {
			t.Fatal("a released claim released twice")
		}
	},
	"StaleReleaseIsRefused": func(t *testing.T, e *env) {
		r := e.win("k", LongLease)
		if e.release("k", r.Fence+1) {
			t.Fatal("release with a wrong fence accepted")
		}
		e.expect("k", gate.HeldByOther)
	},
	"ReleaseDoesNotTouchDone": func(t *testing.T, e *env) {
		r := e.win("k", LongLease)
		e.complete("k", r.Fence, TTL, nil)
		if e.release("k", r.Fence) {
			t.Fatal("release of a done record accepted")
		}
		e.expect("k", gate.AlreadyDone)
	},
	"OldTokenDoesNotReaffirmAfterRelease": func(t *testing.T, e *env) {
		rq := req("k", LongLease)
		r := e.claim(rq).Record
		e.release("k", r.Fence)
		again := e.claim(rq)
		if again.Status != gate.Won || again.Record.Fence != r.Fence+2 {
			t.Fatalf("claim with the released claim's token = %v fence %d, want won with fence %d", again.Status, again.Record.Fence, r.Fence+2)
		}
	},
}
