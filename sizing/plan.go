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
)

// Defaults for a Plan's zero fields (see Plan.WithDefaults).
const (
	// DefaultTTL keeps a done record for an hour, like the gate package.
	DefaultTTL = time.Hour
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
	// outlives its lease (expires_at). Zero means DefaultTTL.
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
	// Pub/Sub applies. Zero means WorkDeadline rounded up to whole seconds,
	// clamped to that range.
	AckDeadline time.Duration
	// MinBackoff is the retry policy's minimum backoff, at most
	// RetryBackoffMax. Zero means DefaultMinBackoff.
	MinBackoff time.Duration
	// MaxBackoff is the retry policy's maximum backoff, at least MinBackoff and
	// at most RetryBackoffMax. Zero means DefaultMaxBackoff.
	MaxBackoff time.Duration
	// MaxDeliveryAttempts is the dead-letter policy's maximum delivery
	// attempts, in [DeliveryAttemptsMin, DeliveryAttemptsMax]. Zero means the
	// conservative requirement (Attempts.Required) clamped to that range.
	MaxDeliveryAttempts int
	// RequestTimeout is the Cloud Run service's request timeout, at most
	// RequestTimeoutMax and at least WorkDeadline. Zero means
	// DefaultRequestTimeout, or WorkDeadline rounded up to whole seconds when
	// that is longer (capped at RequestTimeoutMax).
	RequestTimeout time.Duration
}

// WithDefaults returns p with every zero field replaced by its documented
// default. Negative fields are kept so that Validate reports them.
func (p Plan) WithDefaults() Plan {
	if p.TTL == 0 {
		p.TTL = DefaultTTL
	}
	if p.ShutdownGrace == 0 {
		p.ShutdownGrace = DefaultShutdownGrace
	}
	if p.AckDeadline == 0 {
		p.AckDeadline = min(max(ceilSecond(p.WorkDeadline), AckDeadlineMin), AckDeadlineMax)
	}
	if p.MinBackoff == 0 {
		p.MinBackoff = DefaultMinBackoff
	}
	if p.MaxBackoff == 0 {
		p.MaxBackoff = DefaultMaxBackoff
	}
	if p.RequestTimeout == 0 {
		p.RequestTimeout = min(max(ceilSecond(p.WorkDeadline), DefaultRequestTimeout), RequestTimeoutMax)
	}
	if p.MaxDeliveryAttempts == 0 {
		req := ConservativeAttempts(p.Wait(), p.MinBackoff)
		req = satAdd(req, Margin)
		p.MaxDeliveryAttempts = min(max(req, DeliveryAttemptsMin), DeliveryAttemptsMax)
	}
	return p
}

// ceilSecond rounds d up to a whole number of seconds (d ≤ 0 gives 0).
func ceilSecond(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	if r := d % time.Second; r != 0 {
		if d > maxDuration-time.Second {
			return d - r
		}
		return d - r + time.Second
	}
	return d
}

const maxDuration = time.Duration(1<<63 - 1)

// addDur adds two non-negative durations, saturating instead of overflowing.
func addDur(a, b time.Duration) time.Duration {
	if a > 0 && b > maxDuration-a {
		return maxDuration
	}
	return a + b
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
