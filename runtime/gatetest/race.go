package gatetest

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
)

const racers = 16

var raceTests = map[string]func(*testing.T, *env){
	"ConcurrentClaimsHaveOneWinner": func(t *testing.T, e *env) {
		var won, held atomic.Int32
		var wg sync.WaitGroup
		errs := make(chan error, racers)
		for range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := e.b.Claim(e.ctx, req("k", LongLease))
				if err != nil {
					errs <- err
					return
				}
				switch res.Status {
				case gate.Won:
					won.Add(1)
				case gate.HeldByOther:
					held.Add(1)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("concurrent claim: %v", err)
		}
		if won.Load() != 1 || held.Load() != racers-1 {
			t.Fatalf("won=%d held=%d, want 1 and %d", won.Load(), held.Load(), racers-1)
		}
	},
	"ConcurrentRefusalsCarryTheRecord": func(t *testing.T, e *env) {
		// A fresh key: one winner; every other claim is refused with the
		// winner's record. Then the key is done: every claim is refused with
		// the done record.
		res := raceClaims(t, e, "k")
		var winner gate.Record
		for _, r := range res {
			if r.Status == gate.Won {
				winner = r.Record
			}
		}
		checkRefusals(t, res, 1, gate.HeldByOther, winner, gate.StateClaimed)
		if ok, err := e.b.Complete(e.ctx, gate.Completion{Key: "k", Fence: winner.Fence, TTL: TTL}); err != nil || !ok {
			t.Fatalf("Complete = %v, %v; want true", ok, err)
		}
		checkRefusals(t, raceClaims(t, e, "k"), 0, gate.AlreadyDone, winner, gate.StateDone)
	},
	"ConcurrentReclaimsOfLapsedLeaseHaveOneWinner": func(t *testing.T, e *env) {
		e.win("k", ShortLease)
		e.h.Advance(t, Lapse)
		var won atomic.Int32
		var fence atomic.Int64
		var wg sync.WaitGroup
		for range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := e.b.Claim(e.ctx, req("k", LongLease))
				if err != nil {
					t.Errorf("concurrent reclaim: %v", err)
					return
				}
				if res.Status == gate.Won {
					won.Add(1)
					fence.Store(res.Record.Fence)
				}
			}()
		}
		wg.Wait()
		if won.Load() != 1 || fence.Load() != 2 {
			t.Fatalf("won=%d with fence %d, want exactly one winner with fence 2", won.Load(), fence.Load())
		}
	},
	"ConcurrentCompletesOneCommits": func(t *testing.T, e *env) {
		r := e.win("k", LongLease)
		var ok atomic.Int32
		var wg sync.WaitGroup
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fence := r.Fence
				if i%2 == 1 {
					fence++
				}
				done, err := e.b.Complete(e.ctx, gate.Completion{Key: "k", Fence: fence, TTL: TTL})
				if err != nil {
					t.Errorf("concurrent complete: %v", err)
				}
				if done {
					ok.Add(1)
				}
			}()
		}
		wg.Wait()
		if ok.Load() != 1 {
			t.Fatalf("%d completes committed, want 1", ok.Load())
		}
	},
}

// raceClaims starts racers claims of key at once and returns their answers; a
// claim that errs fails the test.
func raceClaims(t *testing.T, e *env, key string) []gate.ClaimResult {
	t.Helper()
	out := make([]gate.ClaimResult, racers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() {
			<-start
			res, err := e.b.Claim(e.ctx, req(key, LongLease))
			if err != nil {
				t.Errorf("concurrent claim: %v", err)
			}
			out[i] = res
		})
	}
	close(start)
	wg.Wait()
	return out
}

// checkRefusals requires wantWon answers Won and every other one refused with
// status want and the record of rec's claim (key, fence, token, owner) in
// state st.
func checkRefusals(t *testing.T, res []gate.ClaimResult, wantWon int, want gate.ClaimStatus, rec gate.Record, st gate.State) {
	t.Helper()
	won := 0
	for _, r := range res {
		if r.Status == gate.Won {
			won++
			continue
		}
		got := r.Record
		if r.Status != want || got.Key != rec.Key || got.State != st || got.Fence != rec.Fence ||
			got.ClaimToken != rec.ClaimToken || got.Owner != rec.Owner {
			t.Errorf("refused claim = %v with record {key %q, state %s, fence %d, token %q, owner %q}; want %v with {%q, %s, %d, %q, %q}",
				r.Status, got.Key, got.State, got.Fence, got.ClaimToken, got.Owner, want, rec.Key, st, rec.Fence, rec.ClaimToken, rec.Owner)
		}
	}
	if won != wantWon {
		t.Fatalf("%d claims won, want %d", won, wantWon)
	}
}
