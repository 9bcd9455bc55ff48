package gate

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/oncegate/oncegate/runtime/internal/lease"
	"github.com/oncegate/oncegate/sizing"
)

// Defaults for Options' zero fields. Together they are a plan the sizing
// package accepts for a push subscription left at Pub/Sub's defaults (10 s ack
// deadline, 10 s–600 s retry policy, any dead-letter policy): claim 2 s + work
// 4 s + complete 2 s + unknown mark 2 s fit the 10 s ack deadline (invariant
// 5), the 60 s lease outlives the work (invariant 1), and the 48 h TTL
// outlives every redelivery (invariant 4). A body that needs longer than 4 s
// must raise WorkDeadline, and the subscription's ack deadline with it: size
// the plan with `oncegate sizing` or the sizing package, whose numbers
// runtime/gateenv hands over from the environment.
const (
	// DefaultLease is the lease when Options.Lease is zero (60 s, the
	// sizing package's recommended lease): a crashed holder frees its key
	// within a minute.
	DefaultLease = sizing.RecommendedLease
	// DefaultWorkDeadline is the work deadline when Options.WorkDeadline is
	// zero (4 s): with DefaultStoreTimeout it fits Pub/Sub's default 10 s ack
	// deadline (sizing.PubSubDefaultAckDeadline).
	DefaultWorkDeadline = sizing.PubSubDefaultAckDeadline - sizing.StoreCallsPerDelivery*DefaultStoreTimeout
	// DefaultTTL is the ttl when Options.TTL is zero (48 h). It outlives the
	// redelivery horizon of every retry and dead-letter policy Pub/Sub accepts,
	// 100 attempts × 600 s ack deadline + 99 × 600 s maximum backoff ≈ 33 h
	// (sizing.Plan.Horizon, invariant 4), so a late redelivery never finds the
	// done record gone. A plan sized with the sizing package usually needs
	// less (3 h for the recommended one): set TTL from it to keep fewer records.
	DefaultTTL = 48 * time.Hour
	// DefaultStoreTimeout bounds each store phase of a call when
	// Options.StoreTimeout is zero (2 s, sizing.DefaultStoreTimeout).
	DefaultStoreTimeout = sizing.DefaultStoreTimeout
	// MinLease is the shortest Lease accepted: below it a lease lapses within
	// a round trip to a loaded store (milliseconds on Redis or SQL, tens of
	// milliseconds on Datastore), so another holder takes the key while the
	// body runs.
	MinLease = 100 * time.Millisecond
	// MinHeartbeat is the shortest Heartbeat accepted: each beat is one store
	// write and, when it fails, one log line (ONCEGATE_HEARTBEAT=1ns wrote
	// 124,411 lines for a 1 s body); 10 ms is at most 100 writes a second per
	// body.
	MinHeartbeat = 10 * time.Millisecond
)

// Options configure a Gate. The zero value (or nil) means every default, a
// plan the sizing package accepts for push (see the defaults above).
type Options struct {
	// Namespace prefixes every key as "<Namespace>:<key>", so several handlers can
	// share one store. Empty means no prefix. It may not contain ':' (then
	// namespace "a" with key "b:c" and namespace "a:b" with key "c" would be one
	// record) and must be valid UTF-8.
	Namespace string
	// Lease is how long a claim excludes other holders. Default DefaultLease.
	// Without a Heartbeat it must be at least WorkDeadline (invariant 1).
	Lease time.Duration
	// TTL is how long a done or failed record is kept (expires_at = done_at + TTL),
	// and how long a claim outlives its lease. Default DefaultTTL.
	TTL time.Duration
	// WorkDeadline is the deadline the gateway sets on the body's context.
	// Default DefaultWorkDeadline, or Lease when no Heartbeat is set and Lease
	// is shorter. Without a Heartbeat it must not exceed Lease (invariant 1).
	WorkDeadline time.Duration
	// Heartbeat, when non-zero, renews the lease at this interval while the body
	// runs; it must be at most a third of Lease (one renewal may fail and the next
	// may take up to an interval to land, as the sizing model assumes). Each
	// renewal is bounded by the time left on the lease, counted from when the
	// last confirmed one was sent. When a renewal is refused, or the failed ones
	// leave too little of the Lease for the next attempt to land, the body's
	// context is cancelled with a cause matching ErrLeaseLost.
	Heartbeat time.Duration
	// Owner names this holder in records. Default "<hostname>/<pid>".
	Owner string
	// StoreTimeout bounds each store phase of a call, each its own budget: the
	// claim; the complete, retried within it; the unknown mark written when the
	// complete could not be; a release or terminal failure. Each attempt of a
	// retried phase gets at most half of it, so an attempt stuck on a dead
	// connection is retried at least once. The push answer therefore comes
	// within StoreTimeout + WorkDeadline + 2 × StoreTimeout (sizing invariant
	// 5). At least sizing.MinStoreTimeout; default DefaultStoreTimeout.
	StoreTimeout time.Duration
	// OnDuplicate, when set, is called when Lock finds the key done. It observes
	// only: a panic in it is logged and ignored.
	OnDuplicate func(ctx context.Context, rec Record)
	// Codec encodes Do's stored results. Default JSON.
	Codec Codec
	// AEAD, when set, seals Do's stored results; the associated data binds the
	// namespaced key. Default none (results stored in the clear).
	AEAD AEAD
	// CacheSize, when positive, keeps up to this many terminal (done or failed)
	// records per Gate in memory, so a repeated duplicate on this instance skips
	// the store. In-progress claims are never cached. An entry lives until its
	// record's expires_at or CacheTTL, whichever is first. Default 0 (off).
	CacheSize int
	// CacheTTL bounds how long a cached terminal record is trusted. Default TTL.
	CacheTTL time.Duration
	// Logger receives the gateway's structured logs (never payload bytes). Default
	// slog.Default().
	Logger *slog.Logger
}

// withDefaults validates o and returns a copy with defaults applied. The error
// names the field and the accepted form.
func (o *Options) withDefaults() (Options, error) {
	var v Options
	if o != nil {
		v = *o
	}
	if err := lease.NonNegative("gate.Options", lease.Field{Name: "Lease", Val: v.Lease}, lease.Field{Name: "TTL", Val: v.TTL},
		lease.Field{Name: "WorkDeadline", Val: v.WorkDeadline}, lease.Field{Name: "Heartbeat", Val: v.Heartbeat}, lease.Field{Name: "StoreTimeout", Val: v.StoreTimeout}); err != nil {
		return v, err
	}
	if strings.Contains(v.Namespace, ":") || !utf8.ValidString(v.Namespace) {
		return v, fmt.Errorf("gate.Options.Namespace: %.40q must be valid UTF-8 without ':' (the separator between namespace and key), such as \"orders\"", v.Namespace)
	}
	v.Lease = cmp.Or(v.Lease, DefaultLease)
	if v.Lease < MinLease {
		return v, fmt.Errorf("gate.Options.Lease: %s is below the %s floor (gate.MinLease); raise it", v.Lease, MinLease)
	}
	if v.Heartbeat != 0 && v.Heartbeat < MinHeartbeat {
		return v, fmt.Errorf("gate.Options.Heartbeat: %s is below the %s floor (gate.MinHeartbeat); raise it or set 0 for none", v.Heartbeat, MinHeartbeat)
	}
	v.TTL = cmp.Or(v.TTL, DefaultTTL)
	if v.WorkDeadline == 0 {
		v.WorkDeadline = DefaultWorkDeadline
		if v.Heartbeat == 0 && v.Lease < v.WorkDeadline {
			v.WorkDeadline = v.Lease
		}
	}
	v.StoreTimeout = cmp.Or(v.StoreTimeout, DefaultStoreTimeout)
	if v.StoreTimeout < sizing.MinStoreTimeout {
		return v, fmt.Errorf("gate.Options.StoreTimeout: %s is below %s, too short for a store round trip; raise it or leave zero for the default %s", v.StoreTimeout, sizing.MinStoreTimeout, DefaultStoreTimeout)
	}
	if v.Heartbeat == 0 && v.WorkDeadline > v.Lease {
		return v, fmt.Errorf("gate.Options.WorkDeadline: %s exceeds Lease %s; raise Lease or set Heartbeat (invariant 1)", v.WorkDeadline, v.Lease)
	}
	if v.Heartbeat != 0 {
		if err := lease.Interval("gate.Options", "Heartbeat", v.Heartbeat, v.Lease, 3, "lower it or raise Lease"); err != nil {
			return v, err
		}
	}
	v.Owner = cmp.Or(v.Owner, lease.DefaultOwner())
	if v.Codec == nil {
		v.Codec = jsonCodec{}
	}
	if v.CacheSize < 0 {
		return v, fmt.Errorf("gate.Options.CacheSize: must be zero (off) or positive, got %d", v.CacheSize)
	}
	if v.CacheTTL <= 0 || v.CacheTTL > v.TTL {
		v.CacheTTL = v.TTL
	}
	if v.Logger == nil {
		v.Logger = slog.Default()
	}
	return v, nil
}
