package dlock

import (
	"cmp"
	"log/slog"
	"time"

	"github.com/oncegate/oncegate/runtime/internal/lease"
)

// Defaults for Options' zero fields.
const (
	// DefaultNamespace prefixes lock keys ("lock:<key>") when Options.Namespace is
	// empty, so lock records never mix with a Gate's ledger records.
	DefaultNamespace = "lock"
	// DefaultLease is how long an acquired lock excludes others when Options.Lease
	// is zero. It is short because Scope renews it: a crashed holder frees its key
	// within a minute (docs/design.md, "Recommended plans").
	DefaultLease = time.Minute
	// DefaultTTL is how long a lock record outlives its lease when Options.TTL is
	// zero. While the record exists every new token is above every old one; once
	// the store deletes it, tokens restart at 1 (see the package doc's recovery
	// procedure).
	DefaultTTL = 7 * 24 * time.Hour
	// DefaultRetryInterval is AcquireWait's pause between attempts when
	// Options.RetryInterval is zero.
	DefaultRetryInterval = 250 * time.Millisecond
	// DefaultStoreTimeout bounds the release a scope makes after its function
	// returned, when Options.StoreTimeout is zero.
	DefaultStoreTimeout = 10 * time.Second
)

// Options configure a Client. The zero value (or nil) means every default.
type Options struct {
	// Namespace prefixes every lock key as "<Namespace>:<key>". Default
	// DefaultNamespace. A Gate sharing the backend must use another namespace.
	Namespace string
	// Lease is how long an acquired or renewed lock excludes others
	// (time.Duration). Default DefaultLease.
	Lease time.Duration
	// TTL is how long a lock record is kept past its lease (expires_at =
	// lease_expiry + TTL). Default DefaultTTL. It must exceed the longest a
	// paused holder can live, so a reclaim raises the fence instead of a fresh
	// record restarting it at 1 (docs/design.md, invariant 2).
	TTL time.Duration
	// RenewInterval is how often Scope and Do renew the lease while their
	// function runs (time.Duration). Default Lease/3. It must be at most Lease/2,
	// so one failed renewal still leaves time for another before the lease lapses.
	RenewInterval time.Duration
	// RetryInterval is AcquireWait's pause between attempts (time.Duration).
	// Default DefaultRetryInterval.
	RetryInterval time.Duration
	// StoreTimeout bounds the release Scope and Do make after their function
	// returned, which runs even when the caller's context is cancelled. Default
	// DefaultStoreTimeout.
	StoreTimeout time.Duration
	// Owner names the holder when a call passes an empty owner. Default
	// "<hostname>/<pid>".
	Owner string
	// Now is the clock that judges leases (IsLocked, Owner, TTL, Inspect, Release
	// and Renew by owner) when the backend is not a Clock. Default time.Now: the
	// client's clock, so skew between this machine and the store shifts those
	// answers by the skew. Tests pass the fake clock they give the store.
	Now func() time.Time
	// Logger receives renewal warnings. Default slog.Default().
	Logger *slog.Logger
}

// withDefaults validates o and returns a copy with defaults applied. The error
// names the field, what it must be, and how to fix it.
func (o *Options) withDefaults() (Options, error) {
	var v Options
	if o != nil {
		v = *o
	}
	if err := lease.NonNegative("dlock.Options", lease.Field{Name: "Lease", Val: v.Lease}, lease.Field{Name: "TTL", Val: v.TTL},
		lease.Field{Name: "RenewInterval", Val: v.RenewInterval}, lease.Field{Name: "RetryInterval", Val: v.RetryInterval}, lease.Field{Name: "StoreTimeout", Val: v.StoreTimeout}); err != nil {
		return v, err
	}
	v.Namespace = cmp.Or(v.Namespace, DefaultNamespace)
	v.Lease = cmp.Or(v.Lease, DefaultLease)
	v.TTL = cmp.Or(v.TTL, DefaultTTL)
	v.RenewInterval = cmp.Or(v.RenewInterval, v.Lease/3)
	if err := lease.Interval("dlock.Options", "RenewInterval", v.RenewInterval, v.Lease, 2, "lower it, or leave it zero for Lease/3"); err != nil {
		return v, err
	}
	v.RetryInterval = cmp.Or(v.RetryInterval, DefaultRetryInterval)
	v.StoreTimeout = cmp.Or(v.StoreTimeout, DefaultStoreTimeout)
	v.Owner = cmp.Or(v.Owner, lease.DefaultOwner())
	if v.Now == nil {
		v.Now = time.Now
	}
	if v.Logger == nil {
		v.Logger = slog.Default()
	}
	return v, nil
}
