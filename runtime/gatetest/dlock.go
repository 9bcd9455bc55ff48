package gatetest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/dlock"
	"github.com/oncegate/oncegate/runtime/gate"
)

// dlockClient returns a dlock.Client over b with the suite's durations. Leases
// are judged on the store's clock: the backend's own when it is a dlock.Clock,
// else storeNow.
func (e *env) dlockClient(b gate.Backend, lease, renew time.Duration) *dlock.Client {
	e.t.Helper()
	c, err := dlock.New(b, &dlock.Options{Lease: lease, TTL: TTL, RenewInterval: renew,
		RetryInterval: 10 * time.Millisecond, Owner: "suite", Now: e.storeNow})
	if err != nil {
		e.t.Fatalf("dlock.New: %v", err)
	}
	return c
}

// storeNow reads the store's clock: a claim of a fresh key with a zero lease
// records lease_expiry = now on the store's clock.
func (e *env) storeNow() time.Time { return e.win("gatetest-clock:"+token(), 0).LeaseExpiry }

func (e *env) acquire(c *dlock.Client, key, owner string) *dlock.Lock {
	e.t.Helper()
	l, err := c.Acquire(e.ctx, key, owner)
	if err != nil {
		e.t.Fatalf("Acquire(%q, %q): %v", key, owner, err)
	}
	return l
}

func wantHeld(t *testing.T, err error, owner string) {
	t.Helper()
	var re *gate.RecordError
	if !errors.Is(err, dlock.ErrLocked) || !errors.As(err, &re) || re.Record.Owner != owner {
		t.Fatalf("err = %v, want ErrLocked in a *gate.RecordError naming owner %q", err, owner)
	}
}

func wantOK(t *testing.T, what string, ok bool, err error, want bool) {
	t.Helper()
	if err != nil || ok != want {
		t.Fatalf("%s = %v, %v; want %v", what, ok, err, want)
	}
}

// renewCounter is a backend whose renewals are counted, so a test can wait for
// the scope's next renewal instead of sleeping.
type renewCounter struct {
	gate.Backend
	n atomic.Int64
}

func (c *renewCounter) Renew(ctx context.Context, key string, fence int64, lease, ttl time.Duration) (bool, error) {
	ok, err := c.Backend.Renew(ctx, key, fence, lease, ttl)
	if err == nil && ok {
		c.n.Add(1)
	}
	return ok, err
}

// waitRenewals waits until more than after renewals succeeded.
func (c *renewCounter) waitRenewals(t *testing.T, after int64) int64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for c.n.Load() <= after {
		if time.Now().After(deadline) {
			t.Fatalf("no renewal after %d within 10s", after)
		}
		time.Sleep(time.Millisecond) // polls a counter; the renewals run on their own ticker
	}
	return c.n.Load()
}

var dlockTests = map[string]func(*testing.T, *env){
	"AcquireHandsOutRisingTokens": func(t *testing.T, e *env) {
		c := e.dlockClient(e.b, LongLease, 0)
		a := e.acquire(c, "k", "alice")
		wantFence(t, "first acquire", a.Token(), 1)
		_, err := c.Acquire(e.ctx, "k", "bob")
		wantHeld(t, err, "alice")
		_, err = c.Acquire(e.ctx, "k", "alice")
		wantHeld(t, err, "alice") // not re-entrant
		ok, err := a.Release(e.ctx)
		wantOK(t, "Release", ok, err, true)
		ok, err = a.Release(e.ctx)
		wantOK(t, "second Release", ok, err, false)
		wantFence(t, "acquire after release", e.acquire(c, "k", "bob").Token(), 3)
		if _, err := c.Acquire(e.ctx, "", "bob"); !errors.Is(err, gate.ErrInvalidKey) {
			t.Fatalf("Acquire of an empty key: err = %v, want ErrInvalidKey", err)
		}
	},
	"LapsedHolderIsFencedOut": func(t *testing.T, e *env) {
		short := e.dlockClient(e.b, ShortLease, 0)
		a := e.acquire(short, "k", "alice")
		e.h.Advance(t, Lapse)
		b := e.acquire(e.dlockClient(e.b, LongLease, 0), "k", "bob")
		if b.Token() <= a.Token() {
			t.Fatalf("takeover token %d not above the lapsed holder's %d", b.Token(), a.Token())
		}
		if err := a.Renew(e.ctx); !errors.Is(err, gate.ErrLeaseLost) {
			t.Fatalf("zombie Renew: err = %v, want ErrLeaseLost", err)
		}
		ok, err := a.Release(e.ctx)
		wantOK(t, "zombie Release", ok, err, false)
		_, err = short.Acquire(e.ctx, "k", "carol")
		wantHeld(t, err, "bob")
	},
	"ReleaseByOwner": func(t *testing.T, e *env) {
		c := e.dlockClient(e.b, LongLease, 0)
		ok, err := c.Release(e.ctx, "k", "alice")
		wantOK(t, "Release of an absent lock", ok, err, false)
		a := e.acquire(c, "k", "alice")
		ok, err = c.Release(e.ctx, "k", "bob")
		wantOK(t, "Release by another owner", ok, err, false)
		_, err = c.Acquire(e.ctx, "k", "bob")
		wantHeld(t, err, "alice")
		ok, err = c.Release(e.ctx, "k", "alice")
		wantOK(t, "Release by the holder", ok, err, true)
		ok, err = c.Release(e.ctx, "k", "alice")
		wantOK(t, "second Release by the holder", ok, err, false)
		wantFence(t, "acquire after release by owner", e.acquire(c, "k", "bob").Token(), a.Token()+2)
	},
	"RenewKeepsToken": func(t *testing.T, e *env) {
		// A second-long lease: short enough to lapse within the test, long
		// enough that a loaded machine still renews it before it does.
		const shortish = time.Second
		short := e.dlockClient(e.b, shortish, 0)
		a := e.acquire(short, "k", "alice")
		if err := a.Renew(e.ctx); err != nil {
			t.Fatalf("Renew: %v", err)
		}
		long := e.dlockClient(e.b, LongLease, 0)
		ok, err := long.Renew(e.ctx, "k", "bob")
		wantOK(t, "Renew by another owner", ok, err, false)
		ok, err = long.Renew(e.ctx, "k", "alice")
		wantOK(t, "Renew by the holder", ok, err, true)
		e.h.Advance(t, shortish+Lapse) // past the first lease: only the long renewal holds it
		_, err = short.Acquire(e.ctx, "k", "bob")
		wantHeld(t, err, "alice")
		st, err := long.Inspect(e.ctx, "k")
		if err != nil || !st.Locked || st.Record.Fence != a.Token() {
			t.Fatalf("after renewals: %+v, %v; want locked with token %d", st, err, a.Token())
		}
	},
	"InspectOwnerTTL": func(t *testing.T, e *env) {
		c := e.dlockClient(e.b, LongLease, 0)
		locked, err := c.IsLocked(e.ctx, "k")
		if err != nil || locked {
			t.Fatalf("IsLocked(absent) = %v, %v", locked, err)
		}
		a := e.acquire(c, "k", "alice")
		owner, err := c.Owner(e.ctx, "k")
		if err != nil || owner != "alice" {
			t.Fatalf("Owner = %q, %v; want alice", owner, err)
		}
		ttl, err := c.TTL(e.ctx, "k")
		if err != nil || ttl <= 0 || ttl > LongLease {
			t.Fatalf("TTL = %s, %v; want in (0, %s]", ttl, err, LongLease)
		}
		if _, err := a.Release(e.ctx); err != nil {
			t.Fatalf("Release: %v", err)
		}
		st, err := c.Inspect(e.ctx, "k")
		if err != nil || st.Locked || st.Owner != "" || st.Remaining != 0 || st.Record.Fence != a.Token()+1 {
			t.Fatalf("after release: %+v, %v; want unlocked with fence %d", st, err, a.Token()+1)
		}
	},
	"LockRecordsStayApartFromLedgerRecords": func(t *testing.T, e *env) {
		g := e.gate(&gate.Options{Lease: LongLease, TTL: TTL})
		if err := g.Lock(e.ctx, "k", func(context.Context, gate.Claim) error { return nil }); err != nil {
			t.Fatalf("Gate.Lock: %v", err)
		}
		c := e.dlockClient(e.b, LongLease, 0)
		wantFence(t, "lock beside a done ledger record", e.acquire(c, "k", "alice").Token(), 1)
		shared := e.gate(&gate.Options{Namespace: dlock.DefaultNamespace, Lease: LongLease, TTL: TTL})
		if err := shared.Lock(e.ctx, "done", func(context.Context, gate.Claim) error { return nil }); err != nil {
			t.Fatalf("Gate.Lock in the lock namespace: %v", err)
		}
		if _, err := c.Acquire(e.ctx, "done", "alice"); !errors.Is(err, dlock.ErrNotLock) {
			t.Fatalf("Acquire of a done record: err = %v, want ErrNotLock", err)
		}
	},
	"AdvanceFenceNeverLowers": func(t *testing.T, e *env) {
		c := e.dlockClient(e.b, ShortLease, 0)
		advance := func(to, want int64) {
			t.Helper()
			if got, err := c.AdvanceFence(e.ctx, "k", to); err != nil || got != want {
				t.Fatalf("AdvanceFence(%d) = %d, %v; want %d", to, got, err, want)
			}
		}
		advance(1000, 1000)
		a := e.acquire(c, "k", "alice")
		wantFence(t, "acquire after advance", a.Token(), 1001)
		advance(5, 1001)
		advance(2000, 2000)
		if err := a.Renew(e.ctx); !errors.Is(err, gate.ErrLeaseLost) {
			t.Fatalf("Renew after an advance past the token: err = %v, want ErrLeaseLost", err)
		}
		e.h.Advance(t, Lapse)
		wantFence(t, "acquire after the second advance", e.acquire(c, "k", "bob").Token(), 2001)
		if _, err := c.AdvanceFence(e.ctx, "k", -1); err == nil {
			t.Fatal("AdvanceFence(-1) accepted")
		}
	},
	"ExhaustionAtTheBoundary": func(t *testing.T, e *env) {
		c := e.dlockClient(e.b, ShortLease, 0)
		if _, err := c.AdvanceFence(e.ctx, "k", gate.MaxFence+1); !errors.Is(err, gate.ErrFenceExhausted) {
			t.Fatalf("AdvanceFence(MaxFence+1): err = %v, want ErrFenceExhausted", err)
		}
		if _, err := c.AdvanceFence(e.ctx, "k", gate.MaxFence-1); err != nil {
			t.Fatalf("AdvanceFence(MaxFence-1): %v", err)
		}
		l := e.acquire(c, "k", "alice")
		wantFence(t, "last token", l.Token(), gate.MaxFence)
		if _, err := l.Release(e.ctx); !errors.Is(err, gate.ErrFenceExhausted) {
			t.Fatalf("Release of the last token: err = %v, want ErrFenceExhausted", err)
		}
		e.h.Advance(t, Lapse)
		if _, err := c.Acquire(e.ctx, "k", "bob"); !errors.Is(err, gate.ErrFenceExhausted) {
			t.Fatalf("Acquire past MaxFence: err = %v, want ErrFenceExhausted", err)
		}
		ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
		defer cancel()
		if _, err := c.AcquireWait(ctx, "k", "bob"); !errors.Is(err, gate.ErrFenceExhausted) || ctx.Err() != nil {
			t.Fatalf("AcquireWait past MaxFence: err = %v, want ErrFenceExhausted at once", err)
		}
	},
	"AcquireWaitTakesTheReleasedLock": func(t *testing.T, e *env) {
		c := e.dlockClient(e.b, LongLease, 0)
		a := e.acquire(c, "k", "alice")
		short, cancel := context.WithTimeout(e.ctx, time.Second) // room for several attempts on a loaded machine
		defer cancel()
		if _, err := c.AcquireWait(short, "k", "bob"); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, dlock.ErrLocked) {
			t.Fatalf("AcquireWait on a held lock: err = %v, want DeadlineExceeded and ErrLocked", err)
		}
		got := make(chan *dlock.Lock, 1)
		go func() {
			l, err := c.AcquireWait(e.ctx, "k", "bob")
			if err != nil {
				t.Errorf("AcquireWait: %v", err)
			}
			got <- l
		}()
		if _, err := a.Release(e.ctx); err != nil {
			t.Fatalf("Release: %v", err)
		}
		if l := <-got; l != nil {
			wantFence(t, "waiter after release", l.Token(), a.Token()+2)
		}
	},
	"ScopeRenewsWhileFnRuns": func(t *testing.T, e *env) {
		rc := &renewCounter{Backend: e.b}
		lease := 2 * Lapse * 4 / 5 // two Advance(Lapse) lapse it, one does not
		c := e.dlockClient(rc, lease, lease/8)
		err := c.Do(e.ctx, "k", func(ctx context.Context, token int64) error {
			n := rc.waitRenewals(t, 0)
			e.h.Advance(t, Lapse)
			n = rc.waitRenewals(t, n)
			e.h.Advance(t, Lapse)
			rc.waitRenewals(t, n)
			_, err := c.Acquire(e.ctx, "k", "bob")
			wantHeld(t, err, "suite")
			return ctx.Err()
		})
		if err != nil {
			t.Fatalf("Do: %v", err)
		}
		wantFence(t, "acquire after the scope released", e.acquire(c, "k", "bob").Token(), 3)
	},
	"ScopeCancelsOnRefusedRenewal": func(t *testing.T, e *env) {
		c := e.dlockClient(e.b, LongLease, 20*time.Millisecond)
		err := c.Do(e.ctx, "k", func(ctx context.Context, token int64) error {
			// Another party takes the key from under the scope.
			if ok, err := e.b.Release(e.ctx, c.Key("k"), token); err != nil || !ok {
				t.Fatalf("backend Release: %v, %v", ok, err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("fn's context not cancelled within 10s of a refused renewal")
			}
			if !errors.Is(context.Cause(ctx), gate.ErrLeaseLost) {
				t.Fatalf("cause = %v, want ErrLeaseLost", context.Cause(ctx))
			}
			return ctx.Err()
		})
		if !errors.Is(err, gate.ErrLeaseLost) {
			t.Fatalf("Do: err = %v, want ErrLeaseLost", err)
		}
	},
}
