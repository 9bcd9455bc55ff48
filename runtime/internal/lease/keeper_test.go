package lease_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gatetest"
	"github.com/oncegate/oncegate/runtime/internal/lease"
)

var (
	errLost  = errors.New("lease lost")
	errStore = errors.New("store down")
)

// guard bounds every wait on the loop, so a broken loop fails instead of
// hanging; nothing in these tests sleeps.
const guard = 10 * time.Second

// step is one renewal: the clock moves by wait, the tick fires, the renewal's
// answer comes after the clock moved by took more.
type step struct {
	wait, took time.Duration
	ok         bool
	err        error
	left       time.Duration // when non-zero, the renewal's deadline must be this far off
}

// harness drives a Keeper by hand: the test sends each tick and answers each
// renewal, on a clock it moves itself.
type harness struct {
	t       *testing.T
	clk     *gatetest.Clock
	tick    chan time.Time
	calls   chan context.Context
	answers chan step
	retried chan struct{} // one value per retry the loop logs
	ctx     context.Context
	stop    func()
}

func start(t *testing.T, parent context.Context, leaseFor, interval time.Duration) *harness {
	return startBounded(t, parent, leaseFor, interval, 0)
}

// startBounded is start with Keeper.Timeout set to timeout.
func startBounded(t *testing.T, parent context.Context, leaseFor, interval, timeout time.Duration) *harness {
	h := &harness{t: t, clk: gatetest.NewClock(gatetest.Epoch), tick: make(chan time.Time),
		calls: make(chan context.Context), answers: make(chan step), retried: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancelCause(parent)
	t.Cleanup(func() { cancel(nil) })
	h.ctx = ctx
	h.stop = lease.Keeper{
		Renew: func(ctx context.Context) (bool, error) {
			h.calls <- ctx
			a := <-h.answers
			h.clk.Advance(a.took)
			return a.ok, a.err
		},
		Interval:  interval,
		Lease:     leaseFor,
		Timeout:   timeout,
		Confirmed: h.clk.Now(),
		Lost:      func(reason string) error { return fmt.Errorf("%w: %s", errLost, reason) },
		Logger:    slog.New(retryHandler(h.retried)),
		Now:       h.clk.Now,
		Tick:      h.tick,
	}.Start(ctx, cancel)
	return h
}

// fire moves the clock by wait and sends a tick; false when the loop has ended.
func (h *harness) fire(wait time.Duration) bool {
	h.clk.Advance(wait)
	select {
	case h.tick <- h.clk.Now():
		return true
	case <-h.ctx.Done():
		return false
	case <-time.After(guard):
		h.t.Fatal("the loop took no tick and did not cancel the work")
		return false
	}
}

// renew runs s and reports whether the loop made the renewal.
func (h *harness) renew(s step) bool {
	if !h.fire(s.wait) {
		return false
	}
	select {
	case ctx := <-h.calls:
		if s.left != 0 {
			d, ok := ctx.Deadline()
			if got := time.Until(d); !ok || got > s.left || got < s.left-guard/2 {
				h.t.Errorf("renewal deadline %v away (set %v), want %v: the time left on the lease", got, ok, s.left)
			}
		}
		h.answers <- s
		if s.err != nil { // the loop judges a failure on the clock: let it finish first
			select {
			case <-h.retried:
			case <-h.ctx.Done():
			case <-time.After(guard):
				h.t.Fatal("a failed renewal was neither retried nor did it cancel the work")
			}
		}
		return true
	case <-h.ctx.Done():
		return false
	case <-time.After(guard):
		h.t.Fatal("a tick started no renewal")
		return false
	}
}

// retryHandler signals on c for each record logged: the loop logs only retries.
type retryHandler chan struct{}

func (retryHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h retryHandler) Handle(context.Context, slog.Record) error {
	h <- struct{}{}
	return nil
}
func (h retryHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h retryHandler) WithGroup(string) slog.Handler      { return h }

func TestKeeper(t *testing.T) {
	const leaseFor, iv = 30 * time.Second, 10 * time.Second
	ok := func(wait time.Duration) step { return step{wait: wait, ok: true} }
	fail := func(wait time.Duration) step { return step{wait: wait, err: errStore} }
	for _, tc := range []struct {
		name   string
		steps  []step
		renews int    // renewals the loop makes
		lost   string // substring of the cause; empty means the lease is kept
	}{
		{"renewals keep the lease", []step{ok(iv), ok(iv), ok(iv), ok(iv)}, 4, ""},
		{"a refused renewal loses it", []step{ok(iv), {wait: iv}}, 2, "renewal refused"},
		{"a failed renewal is retried while the lease lasts", []step{fail(iv), ok(iv), fail(iv), ok(iv)}, 4, ""},
		{"gives up when the next attempt could land after the lease",
			[]step{fail(iv), fail(iv)}, 2, "no renewal succeeded since 20s ago, and the lease may lapse before the next attempt (last error: store down)"},
		{"a slow tick finds the lease lapsed and sends nothing", []step{ok(leaseFor + time.Second)}, 0, "lapsed before the next renewal was sent"},
		// Sent at 10s, answered at 15s: the lease counts from 10s, so the
		// failure sent at 30s (30s − 10s + the 10s interval ≥ the lease) gives up;
		// counted from the answer it would retry.
		{"the lease counts from each renewal's send",
			[]step{{wait: iv, took: 5 * time.Second, ok: true, left: leaseFor - iv}, {wait: 5 * time.Second, err: errStore, left: leaseFor - iv}, fail(iv)},
			3, "since 20s ago"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, context.Background(), leaseFor, iv)
			renews := 0
			for _, s := range tc.steps {
				if h.renew(s) {
					renews++
				}
			}
			if tc.lost == "" && !h.renew(ok(0)) {
				t.Fatal("the loop ended though the lease was kept")
			}
			if tc.lost != "" {
				select {
				case <-h.ctx.Done():
				case <-time.After(guard):
					t.Fatal("the work's context was not cancelled")
				}
			}
			h.stop()
			cause := context.Cause(h.ctx)
			switch {
			case tc.lost == "" && cause != nil:
				t.Fatalf("cause = %v, want the lease kept", cause)
			case tc.lost != "" && (!errors.Is(cause, errLost) || !strings.Contains(cause.Error(), tc.lost)):
				t.Fatalf("cause = %v, want Lost's cause containing %q", cause, tc.lost)
			case renews != tc.renews:
				t.Fatalf("%d renewals, want %d", renews, tc.renews)
			}
			select { // stop waited for the loop: no one takes a tick now
			case h.tick <- h.clk.Now():
				t.Fatal("the loop still ran after stop returned")
			default:
			}
		})
	}
}

func TestKeeperStopsWithoutALostCauseWhenTheWorkEnds(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	h := start(t, parent, 30*time.Second, 10*time.Second)
	if !h.fire(10 * time.Second) {
		t.Fatal("the loop ended before its first tick")
	}
	<-h.calls
	cancel() // the work ends while a renewal is in flight
	h.answers <- step{err: context.Canceled}
	h.stop()
	if cause := context.Cause(h.ctx); !errors.Is(cause, context.Canceled) || errors.Is(cause, errLost) {
		t.Fatalf("cause = %v, want the parent's cancellation, not a lost lease", cause)
	}
}

// TestKeeperBoundsEachRenewal: with a Timeout each renewal's deadline is the
// smaller of it and the lease left, so one renewal that hangs fails in time
// for the next tick to renew within the lease.
func TestKeeperBoundsEachRenewal(t *testing.T) {
	const leaseFor, iv, timeout = 30 * time.Second, 10 * time.Second, 2 * time.Second
	h := startBounded(t, context.Background(), leaseFor, iv, timeout)
	if !h.renew(step{wait: iv, err: context.DeadlineExceeded, took: timeout, left: timeout}) {
		t.Fatal("no first renewal")
	}
	if !h.renew(step{wait: iv - timeout, ok: true, left: timeout}) {
		t.Fatal("the hung renewal ended the loop; want the next tick to renew")
	}
	h.stop()
	if cause := context.Cause(h.ctx); cause != nil {
		t.Fatalf("cause = %v, want the lease kept", cause)
	}
}
