package gatetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

func (e *env) gate(opts *gate.Options) *gate.Gate {
	e.t.Helper()
	if opts == nil {
		opts = &gate.Options{Lease: LongLease, TTL: TTL}
	}
	g, err := gate.New(e.b, opts)
	if err != nil {
		e.t.Fatalf("gate.New: %v", err)
	}
	return g
}

var gateTests = map[string]func(*testing.T, *env){
	"LockRunsBodyOnceUnderConcurrency": func(t *testing.T, e *env) {
		g := e.gate(nil)
		var runs atomic.Int32
		var wg sync.WaitGroup
		for range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := g.Lock(e.ctx, "order-1", func(context.Context, gate.Claim) error {
					runs.Add(1)
					time.Sleep(20 * time.Millisecond) // widen the window for duplicates
					return nil
				})
				if o := gate.OutcomeOf(err); o != gate.OutcomeRan && o != gate.OutcomeInProgress && o != gate.OutcomeDuplicate {
					t.Errorf("Lock: %v (%v)", err, o)
				}
			}()
		}
		wg.Wait()
		if runs.Load() != 1 {
			t.Fatalf("body ran %d times, want 1", runs.Load())
		}
		if err := g.Lock(e.ctx, "order-1", func(context.Context, gate.Claim) error {
			t.Error("body ran for a done key")
			return nil
		}); !errors.Is(err, gate.ErrDuplicate) {
			t.Fatalf("redelivery: err = %v, want ErrDuplicate", err)
		}
	},
	"LockBodyErrorReleasesForRetry": func(t *testing.T, e *env) {
		g := e.gate(nil)
		boom := errors.New("supplier 502")
		err := g.Lock(e.ctx, "k", func(context.Context, gate.Claim) error { return boom })
		if !errors.Is(err, boom) || gate.OutcomeOf(err) != gate.OutcomeBodyFailed {
			t.Fatalf("err = %v, want the body error classified body-failed", err)
		}
		var fence int64
		if err := g.Lock(e.ctx, "k", func(_ context.Context, c gate.Claim) error { fence = c.Fence; return nil }); err != nil {
			t.Fatalf("retry after body error: %v", err)
		}
		wantFence(t, "retry after release", fence, 3)
	},
	"MutexRunsEveryBodyWithoutOverlap": func(t *testing.T, e *env) {
		g := e.gate(nil)
		var inside, overlaps, runs atomic.Int32
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					err := g.Mutex(e.ctx, "entity-7", func(context.Context, gate.Claim) error {
						if inside.Add(1) > 1 {
							overlaps.Add(1)
						}
						time.Sleep(5 * time.Millisecond)
						inside.Add(-1)
						runs.Add(1)
						return nil
					})
					if err == nil {
						return
					}
					if !errors.Is(err, gate.ErrInProgress) {
						t.Errorf("Mutex: %v", err)
						return
					}
					time.Sleep(2 * time.Millisecond) // a nack's redelivery, compressed
				}
			}()
		}
		wg.Wait()
		if runs.Load() != 4 || overlaps.Load() != 0 {
			t.Fatalf("runs=%d overlaps=%d, want 4 and 0", runs.Load(), overlaps.Load())
		}
	},
}
