package dlock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/dlock"
	"github.com/oncegate/oncegate/runtime/gate"
)

func TestDoRunsFnWithTheTokenAndReleases(t *testing.T) {
	s, clk := newStore()
	c := newClient(t, s, clk, dlock.Options{})
	ctx := context.Background()
	boom := errors.New("boom")
	for i, want := range []error{nil, boom} {
		err := c.Do(ctx, "k", func(_ context.Context, token int64) error {
			if token != int64(2*i+1) {
				t.Errorf("run %d: token %d, want %d", i, token, 2*i+1)
			}
			if _, err := c.Acquire(ctx, "k", "other"); !errors.Is(err, dlock.ErrLocked) {
				t.Errorf("Acquire inside the scope: err = %v, want ErrLocked", err)
			}
			return want
		})
		if !errors.Is(err, want) || (want == nil && err != nil) {
			t.Fatalf("Do run %d: err = %v, want %v", i, err, want)
		}
		if locked, _ := c.IsLocked(ctx, "k"); locked {
			t.Fatalf("run %d: still locked after Do", i)
		}
	}
	held, _ := c.Acquire(ctx, "held", "other")
	err := c.Do(ctx, "held", func(context.Context, int64) error { t.Error("fn ran on a held lock"); return nil })
	var re *gate.RecordError
	if !errors.Is(err, dlock.ErrLocked) || !errors.As(err, &re) || re.Record.Owner != "other" || re.Record.Fence != held.Token() {
		t.Fatalf("Do on a held lock: err = %v, want ErrLocked naming other", err)
	}
}

func TestScopeReleasesOnPanic(t *testing.T) {
	s, clk := newStore()
	c := newClient(t, s, clk, dlock.Options{})
	ctx := context.Background()
	func() {
		defer func() {
			if p := recover(); p != "kaboom" {
				t.Fatalf("recovered %v, want the fn's panic", p)
			}
		}()
		_ = c.Do(ctx, "k", func(context.Context, int64) error { panic("kaboom") })
	}()
	if locked, _ := c.IsLocked(ctx, "k"); locked {
		t.Fatal("still locked after fn panicked")
	}
}

func TestScopeReleasesWhenTheCallerCancels(t *testing.T) {
	s, clk := newStore()
	c := newClient(t, s, clk, dlock.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	err := c.Do(ctx, "k", func(ctx context.Context, _ int64) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	})
	if !errors.Is(err, context.Canceled) || errors.Is(err, gate.ErrLeaseLost) {
		t.Fatalf("Do: err = %v, want context.Canceled", err)
	}
	if locked, _ := c.IsLocked(context.Background(), "k"); locked {
		t.Fatal("still locked: the release must not use the cancelled context")
	}
}

func TestScopeRetriesFailedRenewals(t *testing.T) {
	s, clk := newStore()
	f := &flakyRenewer{Backend: s, fails: 2}
	c := newClient(t, f, clk, dlock.Options{Lease: 400 * time.Millisecond, RenewInterval: 40 * time.Millisecond})
	err := c.Do(context.Background(), "k", func(ctx context.Context, _ int64) error {
		waitFor(t, "a renewal after two failures", func() bool { return f.renewals.Load() >= 2 })
		return context.Cause(ctx)
	})
	if err != nil {
		t.Fatalf("Do: %v (two failed renewals within the lease must not cancel)", err)
	}
}

func TestScopeGivesUpBeforeTheLeaseCanLapse(t *testing.T) {
	s, clk := newStore()
	f := &flakyRenewer{Backend: s, fails: -1}
	const lease, iv = 300 * time.Millisecond, 50 * time.Millisecond
	c := newClient(t, f, clk, dlock.Options{Lease: lease, RenewInterval: iv})
	err := c.Do(context.Background(), "k", func(ctx context.Context, _ int64) error {
		waitDone(t, ctx)
		return ctx.Err()
	})
	if !errors.Is(err, gate.ErrLeaseLost) || !strings.Contains(err.Error(), errStore.Error()) {
		t.Fatalf("Do: err = %v, want ErrLeaseLost naming the last renewal error", err)
	}
	// Renewals at iv, 2iv, … fail; the one at 5iv sees that the next (6iv = lease)
	// could come too late. A slow machine drops ticks, so fewer is fine; one is not.
	if n := f.calls.Load(); n < 2 || n > int64(lease/iv)-1 {
		t.Fatalf("%d renewal attempts, want 2 to %d", n, lease/iv-1)
	}
}

func TestScopeReportsAReleaseRefusedAfterFn(t *testing.T) {
	s, clk := newStore()
	c := newClient(t, s, clk, dlock.Options{Lease: time.Hour})
	ctx := context.Background()
	boom := errors.New("boom")
	err := c.Do(ctx, "k", func(_ context.Context, token int64) error {
		// Another party releases the key between renewals.
		if ok, err := s.Release(ctx, c.Key("k"), token); !ok || err != nil {
			t.Fatalf("store Release: %v %v", ok, err)
		}
		return boom
	})
	if !errors.Is(err, gate.ErrFencedOut) || !errors.Is(err, boom) {
		t.Fatalf("Do: err = %v, want ErrFencedOut and fn's error", err)
	}
}

func TestScopeCancelsOnAdvancedFence(t *testing.T) {
	s, clk := newStore()
	c := newClient(t, s, clk, dlock.Options{Lease: time.Hour, RenewInterval: 10 * time.Millisecond})
	ctx := context.Background()
	fnErr := errors.New("write aborted")
	err := c.Do(ctx, "k", func(fctx context.Context, token int64) error {
		if _, err := c.AdvanceFence(ctx, "k", token+10); err != nil {
			t.Fatal(err)
		}
		waitDone(t, fctx)
		if !errors.Is(context.Cause(fctx), gate.ErrLeaseLost) {
			t.Errorf("cause = %v, want ErrLeaseLost", context.Cause(fctx))
		}
		return fnErr
	})
	if !errors.Is(err, gate.ErrLeaseLost) || !errors.Is(err, fnErr) {
		t.Fatalf("Do: err = %v, want ErrLeaseLost and fn's error", err)
	}
}
