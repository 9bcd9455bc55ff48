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
