package sizing

import (
	"strings"
	"time"
)

// Limits documented by Google Cloud. A Plan outside them is refused by Validate.
const (
	// AckDeadlineMin is the shortest ack deadline a subscription accepts (10 s).
	// For push delivery the ack deadline is also the push request's timeout.
	// Source: Pub/Sub subscription properties,
	// https://cloud.google.com/pubsub/docs/subscription-properties
	AckDeadlineMin = 10 * time.Second
	// AckDeadlineMax is the longest ack deadline a subscription accepts (600 s).
	// Source: as AckDeadlineMin.
	AckDeadlineMax = 600 * time.Second
	// RetryBackoffMax bounds both backoffs of a retry policy (0–600 s).
	// Source: Pub/Sub subscription properties, "Retry policy",
	// https://cloud.google.com/pubsub/docs/subscription-properties
	RetryBackoffMax = 600 * time.Second
	// DeliveryAttemptsMin is the smallest maximum-delivery-attempts value a
	// dead-letter policy accepts (5). Source: Pub/Sub "Dead-letter topics",
	// https://cloud.google.com/pubsub/docs/handling-failures
	DeliveryAttemptsMin = 5
	// DeliveryAttemptsMax is the largest maximum-delivery-attempts value a
	// dead-letter policy accepts (100). Source: as DeliveryAttemptsMin.
	DeliveryAttemptsMax = 100
	// RequestTimeoutMax is the longest request timeout a Cloud Run service
	// accepts (3600 s). Source: Cloud Run "Set request timeout for services",
	// https://cloud.google.com/run/docs/configuring/request-timeout
	RequestTimeoutMax = 3600 * time.Second
	// PubSubDefaultAckDeadline is the ack deadline of a subscription created
	// without one (10 s), the deadline a push endpoint gets unless it is
	// raised. Source: Pub/Sub subscription properties, "Acknowledgment
	// deadline", https://cloud.google.com/pubsub/docs/subscription-properties
	PubSubDefaultAckDeadline = 10 * time.Second
)

// MinStoreTimeout is the shortest StoreTimeout Validate accepts (100 ms): a
// budget below one round trip to a store in another zone plus its commit makes
// every claim fail (503) while the store is healthy.
const MinStoreTimeout = 100 * time.Millisecond

// StoreCallsPerDelivery is how many store phases of StoreTimeout each the time
// budget of one delivery counts besides the work (invariant 5): the claim, the
// complete (retried within its phase) and the unknown mark the gateway writes
// when the complete could not be recorded.
const StoreCallsPerDelivery = 3

// Defaults for a Plan's zero fields (see Plan.WithDefaults).
const (
	// DefaultTTL is the shortest TTL a zero Plan.TTL resolves to (1 h). A zero
	// TTL resolves to the redelivery horizon plus the dead-letter replay window
	// rounded up to whole hours (invariant 4), and never below DefaultTTL.
	DefaultTTL = time.Hour
	// DefaultStoreTimeout bounds each store phase of a delivery (2 s): the
	// claim, the complete with its retries, and the unknown mark. Two seconds
	// is hundreds of round trips to a healthy Redis, SQL or Datastore store,
	// and three phases of it leave room for work within Pub/Sub's default
	// 10 s ack deadline.
	DefaultStoreTimeout = 2 * time.Second
	// DefaultMinBackoff is Pub/Sub's default minimum backoff of a retry policy
	// (10 s). Source: https://cloud.google.com/pubsub/docs/subscription-properties
	DefaultMinBackoff = 10 * time.Second
	// DefaultMaxBackoff is Pub/Sub's default maximum backoff of a retry policy
	// (600 s). Source: as DefaultMinBackoff.
	DefaultMaxBackoff = 600 * time.Second
	// DefaultShutdownGrace is the time Cloud Run leaves between SIGTERM and
	// SIGKILL (10 s). Source: Cloud Run container runtime contract,
	// https://cloud.google.com/run/docs/container-contract ("Instance shutdown")
	DefaultShutdownGrace = 10 * time.Second
	// DefaultRequestTimeout is Cloud Run's default request timeout (300 s).
	// Source: https://cloud.google.com/run/docs/configuring/request-timeout
	DefaultRequestTimeout = 300 * time.Second
)

// Recommended values for a plan built around a renewed lease (docs/design.md): a
// crashed holder frees its key within a minute and the dead-letter policy
// stays tight. Recommend uses them when the lease is left zero.
const (
	// RecommendedLease is the lease of a recommended plan (60 s).
	RecommendedLease = 60 * time.Second
	// RecommendedHeartbeat renews a RecommendedLease every 20 s, a third of it.
	RecommendedHeartbeat = 20 * time.Second
)

// Plan is one set of numbers shared by the subscription, the Cloud Run service
// and the gateway running in it. Every duration is a time.Duration. Zero means
// the default documented on the field; Lease and WorkDeadline have none.
// Negative values are invalid. A Plan is a plain value, safe to copy and compare.
type Plan struct {
	// Lease is how long a claim excludes other holders. Required.
	Lease time.Duration
	// TTL is how long a done record is kept, and how long a claim's record
	// outlives its lease (expires_at). It must cover the redelivery horizon
	// plus DeadLetterReplayWindow (invariant 4). Zero means that sum rounded up
	// to whole hours, at least DefaultTTL.
	TTL time.Duration
	// Heartbeat, when positive, renews the lease at this interval while the
	// work runs. It must be at most a third of Lease: one renewal may fail and
	// the next may take up to an interval to take effect, and the lease must
	// still be live when it does. Zero means no heartbeat.
	Heartbeat time.Duration
	// WorkDeadline is the deadline the gateway sets on the guarded work's
	// context: the longest the work can run. Required.
	WorkDeadline time.Duration
	// ShutdownGrace is how long a holder may live past its work deadline while
	// its instance shuts down. Zero means DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// AckDeadline is the subscription's ack deadline, whole seconds in
	// [AckDeadlineMin, AckDeadlineMax]; for push it is the request timeout
	// Pub/Sub applies. Zero means the time budget (Plan.Budget) rounded up to
	// whole seconds, clamped to that range.
	AckDeadline time.Duration
	// MinBackoff is the retry policy's minimum backoff, at most
	// RetryBackoffMax. Zero means DefaultMinBackoff.
	MinBackoff time.Duration
	// MaxBackoff is the retry policy's maximum backoff, at least MinBackoff and
	// at most RetryBackoffMax. Zero means DefaultMaxBackoff.
	MaxBackoff time.Duration
	// MaxDeliveryAttempts is the dead-letter policy's maximum delivery
	// attempts, in [DeliveryAttemptsMin, DeliveryAttemptsMax]. Zero means the
	// conservative requirement (Attempts.Required, StoreOutage included)
	// clamped to that range.
	MaxDeliveryAttempts int
	// RequestTimeout is the Cloud Run service's request timeout, at most
	// RequestTimeoutMax and at least the time budget. Zero means
	// DefaultRequestTimeout, or the time budget rounded up to whole seconds
	// when that is longer (capped at RequestTimeoutMax).
	RequestTimeout time.Duration
	// StoreTimeout bounds each store phase of one delivery: the claim, the
	// complete (retried within it) and the unknown mark, each its own budget
	// (invariant 5). At least MinStoreTimeout. Zero means DefaultStoreTimeout.
	StoreTimeout time.Duration
	// DeadLetterReplayWindow is how long after a message is dead-lettered its
	// replay under the same business key may still be delivered (the
	// operator's republish plus its delivery); the done record must outlive it
	// too (invariant 4). Zero means dead letters are never replayed under the
	// same key.
	DeadLetterReplayWindow time.Duration
	// StoreOutage is the longest outage of the store (Redis, SQL, Datastore)
	// the delivery attempts must ride out without dead-lettering a healthy
	// message. While the store is unreachable the gateway fails closed: every
	// push is answered 503 and every pull message nacked, so every delivery
	// during the outage is spent. Invariant 3 counts the most deliveries an
	// outage this long can spend on top of the wait (Attempts.Conservative);
	// Attempts.RideOut says how long an outage the plan's attempts ride out
	// whatever this is. Zero means none is budgeted (Margin still absorbs two
	// lost deliveries).
	StoreOutage time.Duration
}

// WithDefaults returns p with every zero field replaced by its documented
// default. Negative fields are kept so that Validate reports them.
func (p Plan) WithDefaults() Plan {
	if p.ShutdownGrace == 0 {
		p.ShutdownGrace = DefaultShutdownGrace
	}
	if p.StoreTimeout == 0 {
		p.StoreTimeout = DefaultStoreTimeout
	}
	budget := p.budget()
	if p.AckDeadline == 0 {
		p.AckDeadline = min(max(ceilSecond(budget), AckDeadlineMin), AckDeadlineMax)
	}
	if p.MinBackoff == 0 {
		p.MinBackoff = DefaultMinBackoff
	}
	if p.MaxBackoff == 0 {
		p.MaxBackoff = DefaultMaxBackoff
	}
	if p.RequestTimeout == 0 {
		p.RequestTimeout = min(max(ceilSecond(budget), DefaultRequestTimeout), RequestTimeoutMax)
	}
	if p.MaxDeliveryAttempts == 0 {
		req := satAdd(conservative(p.Wait(), max(p.StoreOutage, 0), p.MinBackoff), Margin)
		p.MaxDeliveryAttempts = min(max(req, DeliveryAttemptsMin), DeliveryAttemptsMax)
	}
	if p.TTL == 0 {
		p.TTL = max(DefaultTTL, ceilUnit(addDur(p.horizon(), max(p.DeadLetterReplayWindow, 0)), time.Hour))
	}
	return p
}

// ceilUnit rounds d up to a whole number of units (d ≤ 0 gives 0),
// saturating instead of overflowing.
func ceilUnit(d, unit time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	if r := d % unit; r != 0 {
		if d > maxDuration-unit {
			return d - r
		}
		return d - r + unit
	}
	return d
}

// ceilSecond rounds d up to a whole number of seconds (d ≤ 0 gives 0).
func ceilSecond(d time.Duration) time.Duration { return ceilUnit(d, time.Second) }

const maxDuration = time.Duration(1<<63 - 1)

// addDur adds two non-negative durations, saturating instead of overflowing.
func addDur(a, b time.Duration) time.Duration {
	if a > 0 && b > maxDuration-a {
		return maxDuration
	}
	return a + b
}

// mulDur multiplies a non-negative duration by n ≥ 0, saturating.
func mulDur(d time.Duration, n int) time.Duration {
	if d <= 0 || n <= 0 {
		return 0
	}
	if int64(d) > int64(maxDuration)/int64(n) {
		return maxDuration
	}
	return d * time.Duration(n)
}

// FormatDuration writes d for people: Go duration syntax (time.ParseDuration
// reads it back exactly) without trailing zero units, so 60 s is "1m", an hour
// "1h" and 90 s "1m30s". Every duration the package prints goes through it;
// the computed values it prints (fixes, horizons) are rounded first, in the
// safe direction, to milliseconds below a minute and whole seconds above.
func FormatDuration(d time.Duration) string { return fmtDur(d) }

// humanUnit is the rounding unit of a computed duration near d.
func humanUnit(d time.Duration) time.Duration {
	if d < time.Minute {
		return time.Millisecond
	}
	return time.Second
}

// fmtUp writes a lower bound (a value to raise something to), rounded up.
func fmtUp(d time.Duration) string { return fmtDur(ceilUnit(d, humanUnit(d))) }

// fmtDown writes an upper bound (a value to lower something to), rounded down.
func fmtDown(d time.Duration) string {
	if d <= 0 {
		return fmtDur(d)
	}
	return fmtDur(d - d%humanUnit(d))
}

// fmtDur writes d in Go duration syntax without trailing zero units:
// 60s is "1m", 15 minutes "15m", an hour "1h", 90 s "1m30s".
func fmtDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
