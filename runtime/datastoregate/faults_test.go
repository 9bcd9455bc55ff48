package datastoregate_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/datastore"
	"google.golang.org/grpc/codes"

	"github.com/oncegate/oncegate/internal/dsfake"
	"github.com/oncegate/oncegate/runtime/datastoregate"
	"github.com/oncegate/oncegate/runtime/gate"
)

// TestConcurrentClaimsWithAborts: 20 gates race for one key while commits are
// aborted; exactly one body runs, everyone else is told in-progress or
// store-unavailable, and nothing else.
func TestConcurrentClaimsWithAborts(t *testing.T) {
	cases := []struct {
		name        string
		aborts      int
		maxAttempts int
	}{
		{"aborts absorbed by retries", 4, 0},
		{"aborts exhaust a single attempt", 3, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, &datastoregate.Options{MaxAttempts: tc.maxAttempts})
			g, err := gate.New(f.s, &gate.Options{Lease: time.Minute, TTL: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			f.srv.AbortCommits(tc.aborts)
			const racers = 20
			var runs atomic.Int32
			outcomes := make(chan gate.Outcome, racers)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for range racers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					err := g.Lock(f.ctx, "order-1", func(context.Context, gate.Claim) error {
						runs.Add(1)
						return nil
					})
					outcomes <- gate.OutcomeOf(err)
				}()
			}
			close(start)
			wg.Wait()
			close(outcomes)
			count := map[gate.Outcome]int{}
			for o := range outcomes {
				count[o]++
			}
			if runs.Load() != 1 || count[gate.OutcomeRan] != 1 {
				t.Fatalf("body ran %d times, outcomes %v; want exactly one run", runs.Load(), count)
			}
			if n := count[gate.OutcomeRan] + count[gate.OutcomeInProgress] + count[gate.OutcomeDuplicate] +
				count[gate.OutcomeStoreUnavailable]; n != racers {
				t.Fatalf("outcomes %v: only ran, in-progress, duplicate or store-unavailable are acceptable", count)
			}
			if r, ok, err := f.s.Inspect(f.ctx, "order-1"); err != nil || !ok || r.State != gate.StateDone || r.Fence != 1 {
				t.Fatalf("record = %+v, %v, %v; want done at fence 1", r, ok, err)
			}
		})
	}
}

// TestAbortIsNeverAWin: a claim whose every commit aborts is a store error, and
// the record is left as it was. (The claim takes over a lapsed lease, so it
// runs the transaction: a fresh key is a non-transactional insert.)
func TestAbortIsNeverAWin(t *testing.T) {
	f := newFixture(t, &datastoregate.Options{MaxAttempts: 3})
	f.win(t, "k", "t0")
	f.clock.Advance(2 * time.Minute)
	f.srv.ResetCounts()
	f.srv.AbortCommits(3)
	res, err := f.s.Claim(f.ctx, claimReq("k", "t1"))
	if !errors.Is(err, datastore.ErrConcurrentTransaction) || res.Status == gate.Won {
		t.Fatalf("Claim = %v, %v; want an error wrapping ErrConcurrentTransaction", res.Status, err)
	}
	if got := f.srv.Count(dsfake.MethodCommit); got != 3 {
		t.Errorf("%d commits, want 3 (MaxAttempts)", got)
	}
	if r, ok, _ := f.s.Inspect(f.ctx, "k"); !ok || r.Fence != 1 || r.ClaimToken != "t0" {
		t.Fatalf("record after aborted attempts = %+v, %v; want t0's claim at fence 1", r, ok)
	}
	if r := f.win(t, "k", "t2"); r.Fence != 2 {
		t.Fatalf("fence after aborted attempts = %d, want 2", r.Fence)
	}
}

// TestLostCommitResponse: an operation whose commit applied but whose answer was
// lost is retried and reports what it did, without applying twice.
func TestLostCommitResponse(t *testing.T) {
	type op struct {
		name  string
		setup func(t *testing.T, f *fixture) int64 // returns the fence to act on
		do    func(f *fixture, fence int64) (any, error)
		want  any
		check func(t *testing.T, r gate.Record, fence int64)
	}
	ops := []op{
		{"fresh claim", func(*testing.T, *fixture) int64 { return 0 },
			func(f *fixture, _ int64) (any, error) {
				res, err := f.s.Claim(f.ctx, claimReq("k", "mine"))
				return fmt.Sprint(res.Status, res.Record.Fence), err
			}, "won 1",
			func(t *testing.T, r gate.Record, _ int64) {
				if r.State != gate.StateClaimed || r.Fence != 1 || r.ClaimToken != "mine" {
					t.Fatalf("record %+v, want claimed by token mine at fence 1", r)
				}
			}},
		{"reclaim of a lapsed lease", func(t *testing.T, f *fixture) int64 {
			f.win(t, "k", "old")
			f.clock.Advance(2 * time.Minute)
			return 0
		}, func(f *fixture, _ int64) (any, error) {
			res, err := f.s.Claim(f.ctx, claimReq("k", "mine"))
			return fmt.Sprint(res.Status, res.Record.Fence), err
		}, "won 2", func(t *testing.T, r gate.Record, _ int64) {
			if r.Fence != 2 || r.ClaimToken != "mine" {
				t.Fatalf("record %+v, want token mine at fence 2 (bumped once)", r)
			}
		}},
		{"complete", func(t *testing.T, f *fixture) int64 { return f.win(t, "k", "t").Fence },
			func(f *fixture, fence int64) (any, error) {
				return f.s.Complete(f.ctx, gate.Completion{Key: "k", Fence: fence, TTL: time.Hour, Result: []byte("r")})
			}, true,
			func(t *testing.T, r gate.Record, fence int64) {
				if r.State != gate.StateDone || r.Fence != fence || string(r.Result) != "r" {
					t.Fatalf("record %+v, want done", r)
				}
			}},
		{"release", func(t *testing.T, f *fixture) int64 { return f.win(t, "k", "t").Fence },
			func(f *fixture, fence int64) (any, error) { return f.s.Release(f.ctx, "k", fence) }, true,
			func(t *testing.T, r gate.Record, fence int64) {
				if r.Fence != fence+1 {
					t.Fatalf("fence %d after release of %d, want %d (advanced once)", r.Fence, fence, fence+1)
				}
			}},
		{"mark unknown", func(t *testing.T, f *fixture) int64 { return f.win(t, "k", "t").Fence },
			func(f *fixture, fence int64) (any, error) { return f.s.MarkUnknown(f.ctx, "k", fence) }, true,
			func(t *testing.T, r gate.Record, _ int64) {
				if r.State != gate.StateUnknown {
					t.Fatalf("record %+v, want unknown", r)
				}
			}},
		{"resolve as retry", func(t *testing.T, f *fixture) int64 {
			r := f.win(t, "k", "t")
			if ok, err := f.s.MarkUnknown(f.ctx, "k", r.Fence); !ok || err != nil {
				t.Fatal(ok, err)
			}
			return r.Fence
		}, func(f *fixture, _ int64) (any, error) { return nil, f.s.Resolve(f.ctx, "k", false, time.Hour) }, nil,
			func(t *testing.T, r gate.Record, fence int64) {
				if r.State != gate.StateClaimed || r.Fence != fence+1 {
					t.Fatalf("record %+v, want claimed at fence %d", r, fence+1)
				}
			}},
	}
	for _, code := range []codes.Code{codes.Unavailable, codes.DeadlineExceeded, codes.Internal} {
		for _, o := range ops {
			t.Run(code.String()+"/"+o.name, func(t *testing.T) {
				f := newFixture(t, nil)
				fence := o.setup(t, f)
				f.srv.DropCommitResponses(1, code)
				got, err := o.do(f, fence)
				if err != nil || got != o.want {
					t.Fatalf("got %v, %v; want %v", got, err, o.want)
				}
				if f.srv.Count(dsfake.MethodLookup) < 2 {
					t.Fatal("the lost commit was not retried")
				}
				r, ok, err := f.s.Inspect(f.ctx, "k")
				if err != nil || !ok {
					t.Fatalf("Inspect: %v %v", ok, err)
				}
				o.check(t, r, fence)
			})
		}
	}
}

// TestRoundTrips asserts from the fake's counters that each write is one
// begin-later transaction, a Lookup and a Commit or Rollback, never a
// BeginTransaction; except a claim, which answers a refusal from one Lookup
// and creates a fresh record with a Lookup and a non-transactional Commit, and
// runs the transaction only to take over a record.
func TestRoundTrips(t *testing.T) {
	type counts = map[string]int
	won := counts{dsfake.MethodLookup: 1, dsfake.MethodCommit: 1}
	refused := counts{dsfake.MethodLookup: 1, dsfake.MethodRollback: 1}
	lookup := counts{dsfake.MethodLookup: 1}
	done := func(t *testing.T, f *fixture) {
		r := f.win(t, "k", "a")
		if ok, err := f.s.Complete(f.ctx, gate.Completion{Key: "k", Fence: r.Fence, TTL: time.Hour}); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, f *fixture)
		do    func(f *fixture) error
		want  counts
	}{
		{"claim absent", func(*testing.T, *fixture) {}, func(f *fixture) error {
			_, err := f.s.Claim(f.ctx, claimReq("k", "a"))
			return err
		}, won},
		{"claim held", func(t *testing.T, f *fixture) { f.win(t, "k", "a") }, func(f *fixture) error {
			return wantClaim(f, "b", gate.HeldByOther)
		}, lookup},
		{"claim done", done, func(f *fixture) error { return wantClaim(f, "b", gate.AlreadyDone) }, lookup},
		{"claim re-affirmed by its token", func(t *testing.T, f *fixture) { f.win(t, "k", "a") }, func(f *fixture) error {
			return wantClaim(f, "a", gate.Won)
		}, lookup},
		{"claim of a lapsed lease", func(t *testing.T, f *fixture) {
			f.win(t, "k", "a")
			f.clock.Advance(2 * time.Minute)
		}, func(f *fixture) error { return wantClaim(f, "b", gate.Won) }, counts{dsfake.MethodLookup: 2, dsfake.MethodCommit: 1}},
		{"claim of an expired done record", func(t *testing.T, f *fixture) {
			done(t, f)
			f.clock.Advance(2 * time.Hour)
		}, func(f *fixture) error { return wantClaim(f, "b", gate.Won) }, counts{dsfake.MethodLookup: 2, dsfake.MethodCommit: 1}},
		{"complete", func(t *testing.T, f *fixture) { f.win(t, "k", "a") }, func(f *fixture) error {
			_, err := f.s.Complete(f.ctx, gate.Completion{Key: "k", Fence: 1, TTL: time.Hour})
			return err
		}, won},
		{"complete stale", func(t *testing.T, f *fixture) { f.win(t, "k", "a") }, func(f *fixture) error {
			_, err := f.s.Complete(f.ctx, gate.Completion{Key: "k", Fence: 2, TTL: time.Hour})
			return err
		}, refused},
		{"release", func(t *testing.T, f *fixture) { f.win(t, "k", "a") }, func(f *fixture) error {
			_, err := f.s.Release(f.ctx, "k", 1)
			return err
		}, won},
		{"renew", func(t *testing.T, f *fixture) { f.win(t, "k", "a") }, func(f *fixture) error {
			_, err := f.s.Renew(f.ctx, "k", 1, time.Minute, time.Hour)
			return err
		}, won},
		{"inspect", func(t *testing.T, f *fixture) { f.win(t, "k", "a") }, func(f *fixture) error {
			_, _, err := f.s.Inspect(f.ctx, "k")
			return err
		}, counts{dsfake.MethodLookup: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			tc.setup(t, f)
			f.srv.ResetCounts()
			if err := tc.do(f); err != nil {
				t.Fatal(err)
			}
			got := f.srv.Counts()
			if len(got) != len(tc.want) {
				t.Fatalf("RPCs %v, want %v", got, tc.want)
			}
			for m, n := range tc.want {
				if got[m] != n {
					t.Fatalf("RPCs %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// wantClaim claims key k with token and returns an error unless it is answered
// want.
func wantClaim(f *fixture, token string, want gate.ClaimStatus) error {
	res, err := f.s.Claim(f.ctx, claimReq("k", token))
	if err == nil && res.Status != want {
		err = fmt.Errorf("claim answered %v, want %v", res.Status, want)
	}
	return err
}

// TestCancelledContext: a context that ends stops the retries and is returned
// unwrapped. (The claim takes over a lapsed lease, so it runs the transaction
// whose commit aborts.)
func TestCancelledContext(t *testing.T) {
	f := newFixture(t, &datastoregate.Options{RetryBackoff: time.Hour})
	f.win(t, "k", "old")
	f.clock.Advance(2 * time.Minute)
	f.srv.AbortCommits(1)
	ctx, cancel := context.WithTimeout(f.ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := f.s.Claim(ctx, claimReq("k", "a")); err != context.DeadlineExceeded {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
}

// TestContextEndsDuringRPC: a deadline that passes while an RPC is in flight is
// returned as the context's own error, so callers can match it.
func TestContextEndsDuringRPC(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.SetLatency(200 * time.Millisecond)
	ctx, cancel := context.WithTimeout(f.ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := f.s.Claim(ctx, claimReq("k", "a")); err != context.DeadlineExceeded {
		t.Fatalf("Claim err = %v, want context.DeadlineExceeded", err)
	}
	if _, _, err := f.s.Inspect(ctx, "k"); err != context.DeadlineExceeded {
		t.Fatalf("Inspect err = %v, want context.DeadlineExceeded", err)
	}
}
