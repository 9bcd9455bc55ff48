package dlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/dlock"
	"github.com/oncegate/oncegate/runtime/gate"
)

func TestInspectOnTheInjectedClock(t *testing.T) {
	s, clk := newStore()
	c := newClient(t, s, clk, dlock.Options{Lease: time.Minute})
	ctx := context.Background()
	l, err := c.Acquire(ctx, "k", "alice")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		advance time.Duration
		locked  bool
		owner   string
		ttl     time.Duration
	}{
		{0, true, "alice", time.Minute},
		{15 * time.Second, true, "alice", 45 * time.Second},
		{44*time.Second + 999*time.Millisecond, true, "alice", time.Millisecond},
		{time.Millisecond, false, "", 0}, // exactly at lease expiry: lapsed
	} {
		clk.Advance(tc.advance)
		st, err := c.Inspect(ctx, "k")
		if err != nil || st.Locked != tc.locked || st.Owner != tc.owner || st.Remaining != tc.ttl || st.StoreClock || !st.Now.Equal(clk.Now()) {
			t.Fatalf("after +%s: %+v, %v; want locked=%v owner=%q remaining=%s on the client clock", tc.advance, st, err, tc.locked, tc.owner, tc.ttl)
		}
		if st.Record.Fence != l.Token() || st.Record.Owner != "alice" {
			t.Fatalf("record = %+v; want fence %d, owner alice", st.Record, l.Token())
		}
	}
	if _, err := c.Inspect(ctx, ""); !errors.Is(err, gate.ErrInvalidKey) {
		t.Fatalf("Inspect(\"\"): err = %v, want ErrInvalidKey", err)
	}
}

func TestInspectPrefersTheStoreClock(t *testing.T) {
	s, clk := newStore()
	sc := &storeClock{Store: s, clk: clk}
	skewed := func() time.Time { return clk.Now().Add(time.Hour) } // client clock an hour ahead
	c := newClient(t, sc, clk, dlock.Options{Lease: time.Minute, Now: skewed})
	ctx := context.Background()
	if _, err := c.Acquire(ctx, "k", "alice"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(20 * time.Second)
	st, err := c.Inspect(ctx, "k")
	if err != nil || !st.Locked || !st.StoreClock || st.Remaining != 40*time.Second {
		t.Fatalf("Inspect = %+v, %v; want locked with 40s left on the store clock", st, err)
	}
	if ok, err := c.Release(ctx, "k", "alice"); !ok || err != nil {
		t.Fatalf("Release by owner judged on the store clock = %v, %v; want true", ok, err)
	}
	sc.err = errStore
	if _, err := c.IsLocked(ctx, "k"); !errors.Is(err, errStore) {
		t.Fatalf("IsLocked with a failing store clock: err = %v, want the clock's error", err)
	}
}

func TestRenewByOwnerKeepsTokenAndResetsLease(t *testing.T) {
	s, clk := newStore()
	c := newClient(t, s, clk, dlock.Options{Lease: time.Minute})
	ctx := context.Background()
	l, err := c.Acquire(ctx, "k", "alice")
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(50 * time.Second)
	if ok, err := c.Renew(ctx, "k", "alice"); !ok || err != nil {
		t.Fatalf("Renew = %v, %v", ok, err)
	}
	clk.Advance(50 * time.Second)
	st, _ := c.Inspect(ctx, "k")
	if !st.Locked || st.Remaining != 10*time.Second || st.Record.Fence != l.Token() {
		t.Fatalf("after renew: %+v; want locked, 10s left, token %d", st, l.Token())
	}
	clk.Advance(10 * time.Second)
	if ok, err := c.Renew(ctx, "k", "alice"); ok || err != nil {
		t.Fatalf("Renew by owner of a lapsed lease = %v, %v; want false", ok, err)
	}
	if err := l.Renew(ctx); err != nil {
		t.Fatalf("Lock.Renew of a lapsed lease no one took: %v", err)
	}
	if locked, _ := c.IsLocked(ctx, "k"); !locked {
		t.Fatal("not locked after Lock.Renew")
	}
}
