package dlock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/dlock"
	"github.com/oncegate/oncegate/runtime/memgate"
)

func TestOptionsValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts dlock.Options
		want string // substring of the error; empty means valid
	}{
		{"zero is defaults", dlock.Options{}, ""},
		{"negative lease", dlock.Options{Lease: -time.Second}, "dlock.Options.Lease: must be zero"},
		{"negative ttl", dlock.Options{TTL: -1}, "dlock.Options.TTL"},
		{"renew at half the lease", dlock.Options{Lease: time.Minute, RenewInterval: 30 * time.Second}, ""},
		{"renew over half the lease", dlock.Options{Lease: time.Minute, RenewInterval: 31 * time.Second}, "dlock.Options.RenewInterval: 31s must be positive and at most half of Lease 1m0s"},
		{"lease too short for a default interval", dlock.Options{Lease: 2}, "dlock.Options.RenewInterval"},
		{"negative retry", dlock.Options{RetryInterval: -1}, "dlock.Options.RetryInterval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dlock.New(memgate.New(nil), &tc.opts)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("New: err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := dlock.New(nil, nil); err == nil {
		t.Fatal("New(nil backend) accepted")
	}
}

func TestDefaults(t *testing.T) {
	c, err := dlock.New(memgate.New(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := c.Options()
	if o.Namespace != "lock" || o.Lease != time.Minute || o.RenewInterval != 20*time.Second || o.TTL != dlock.DefaultTTL || o.Owner == "" {
		t.Fatalf("defaults = %+v", o)
	}
	if got := c.Key("k"); got != "lock:k" {
		t.Fatalf("Key = %q, want lock:k", got)
	}
}

func TestAcquireOwnerDefaultAndLeaseOnStoreClock(t *testing.T) {
	s, clk := newStore()
	c := newClient(t, s, clk, dlock.Options{Lease: time.Minute})
	l, err := c.Acquire(context.Background(), "k", "")
	if err != nil {
		t.Fatal(err)
	}
	if l.Owner() != "me" || l.Key() != "k" || l.StoreKey() != "lock:k" || !l.LeaseExpiry().Equal(clk.Now().Add(time.Minute)) {
		t.Fatalf("lock = owner %q key %q store key %q lease expiry %v", l.Owner(), l.Key(), l.StoreKey(), l.LeaseExpiry())
	}
}

func TestAcquireWaitRecognisesItsLostClaim(t *testing.T) {
	s, clk := newStore()
	b := &lostAnswer{Backend: s}
	c := newClient(t, b, clk, dlock.Options{Lease: time.Hour, RetryInterval: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, err := c.AcquireWait(ctx, "k", "")
	if err != nil {
		t.Fatalf("AcquireWait after a lost answer: %v (a new token per attempt waits out its own lease)", err)
	}
	if l.Token() != 1 {
		t.Fatalf("token = %d, want 1 (the lost claim re-affirmed)", l.Token())
	}
	if !b.once.Load() {
		t.Fatal("the lost answer was never injected")
	}
}

func TestAcquireAfterLostAnswerWaitsForTheLease(t *testing.T) {
	s, clk := newStore()
	c := newClient(t, &lostAnswer{Backend: s}, clk, dlock.Options{Lease: time.Minute})
	ctx := context.Background()
	if _, err := c.Acquire(ctx, "k", ""); !errors.Is(err, errStore) {
		t.Fatalf("Acquire: err = %v, want the store's error", err)
	}
	if _, err := c.Acquire(ctx, "k", ""); !errors.Is(err, dlock.ErrLocked) {
		t.Fatalf("second Acquire: err = %v, want ErrLocked (the first claim was applied)", err)
	}
	clk.Advance(time.Minute)
	if l, err := c.Acquire(ctx, "k", ""); err != nil || l.Token() != 2 {
		t.Fatalf("Acquire after the lease: %v, %v; want token 2", l, err)
	}
}

func TestReleaseByOwnerOfALapsedLease(t *testing.T) {
	s, clk := newStore()
	c := newClient(t, s, clk, dlock.Options{Lease: time.Minute})
	ctx := context.Background()
	l, err := c.Acquire(ctx, "k", "alice")
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	if ok, err := c.Release(ctx, "k", "alice"); ok || err != nil {
		t.Fatalf("Release by owner of a lapsed lease = %v, %v; want false (not held)", ok, err)
	}
	if ok, err := l.Release(ctx); !ok || err != nil {
		t.Fatalf("Lock.Release of a lapsed lease no one took = %v, %v; want true", ok, err)
	}
}
