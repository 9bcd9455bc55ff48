package dlock_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/dlock"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gatetest"
	"github.com/oncegate/oncegate/runtime/memgate"
)

func newClock() *gatetest.Clock { return gatetest.NewClock(gatetest.Epoch) }

// newStore returns a memgate store on a fake clock.
func newStore() (*memgate.Store, *gatetest.Clock) {
	clk := newClock()
	return memgate.New(&memgate.Options{Now: clk.Now}), clk
}

// newClient returns a Client over b judged on clk, with opts' non-zero fields.
func newClient(t *testing.T, b gate.Backend, clk *gatetest.Clock, opts dlock.Options) *dlock.Client {
	t.Helper()
	if opts.Now == nil {
		opts.Now = clk.Now
	}
	if opts.Owner == "" {
		opts.Owner = "me"
	}
	c, err := dlock.New(b, &opts)
	if err != nil {
		t.Fatalf("dlock.New: %v", err)
	}
	return c
}

// flakyRenewer fails the first fails renewals (all of them when fails < 0) with
// errStore, then delegates.
type flakyRenewer struct {
	gate.Backend
	fails    int64
	calls    atomic.Int64
	renewals atomic.Int64
}

var errStore = errors.New("store unreachable")

func (f *flakyRenewer) Renew(ctx context.Context, key string, fence int64, lease, ttl time.Duration) (bool, error) {
	n := f.calls.Add(1)
	if f.fails < 0 || n <= f.fails {
		return false, errStore
	}
	ok, err := f.Backend.Renew(ctx, key, fence, lease, ttl)
	if ok {
		f.renewals.Add(1)
	}
	return ok, err
}

// lostAnswer applies the first claim, then reports an error as if its answer was
// lost on the way back.
type lostAnswer struct {
	gate.Backend
	once atomic.Bool
}

func (l *lostAnswer) Claim(ctx context.Context, req gate.ClaimRequest) (gate.ClaimResult, error) {
	res, err := l.Backend.Claim(ctx, req)
	if err == nil && l.once.CompareAndSwap(false, true) {
		return gate.ClaimResult{}, errStore
	}
	return res, err
}

// storeClock is a backend that is a dlock.Clock reading clk.
type storeClock struct {
	*memgate.Store
	clk *gatetest.Clock
	err error
}

func (s *storeClock) Now(context.Context) (time.Time, error) { return s.clk.Now(), s.err }

// waitFor polls cond until it holds or 10s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(time.Millisecond) // polls state that other goroutines change
	}
}

// waitDone waits until ctx is done, failing the test after 10s.
func waitDone(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("context not done within 10s")
	}
}
