package sizing

import (
	"fmt"
	"time"
)

// Pull subscriber limits and defaults, from the Go client
// (cloud.google.com/go/pubsub/v2, ReceiveSettings and DefaultReceiveSettings)
// and the platforms pull workers run on.
const (
	// DefaultMaxExtension is the client's default ReceiveSettings.MaxExtension
	// (60 min): how long it keeps extending a received message's ack deadline.
	DefaultMaxExtension = 60 * time.Minute
	// DefaultMaxOutstandingMessages is the client's default
	// ReceiveSettings.MaxOutstandingMessages (1000): how many messages it hands
	// to callbacks at once.
	DefaultMaxOutstandingMessages = 1000
	// ExtensionPeriodMin and ExtensionPeriodMax bound
	// ReceiveSettings.MaxDurationPerAckExtension (10 s–600 s, the client's doc;
	// the ack deadline's own range, Pub/Sub subscription properties).
	ExtensionPeriodMin = 10 * time.Second
	ExtensionPeriodMax = 600 * time.Second
	// DefaultPullShutdownGrace is a pull worker's default shutdown grace: 30 s,
	// Kubernetes' default terminationGracePeriodSeconds (Kubernetes, "Pod
	// Lifecycle", termination of Pods,
	// https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination).
	// On Cloud Run set ShutdownGrace to DefaultShutdownGrace.
	DefaultPullShutdownGrace = 30 * time.Second
	// MinDeployedLease and MinDeployedHeartbeat are the floors a worker
	// configured from the environment applies at start-up
	// (runtime/gateenv.MinEnvLease and MinEnvHeartbeat, which are these): a
	// lease under a second lapses within a few slow round trips to a managed
	// store, and a shorter heartbeat spends its write budget on one body.
	// PullPlan.Validate refuses a plan below them, so a plan the components
	// accept is one the pull workers start with.
	MinDeployedLease     = time.Second
	MinDeployedHeartbeat = time.Second
)

// PullPlan is the plan of a pull subscriber (Subscriber.Receive on GKE,
// Compute Engine or a Cloud Run worker pool): the shared Plan plus the client's
// receive settings and the backend's connections. Plan.ShutdownGrace is the
// platform's SIGTERM-to-SIGKILL time (zero: DefaultPullShutdownGrace);
// Plan.AckDeadline the subscription's; Plan.StoreTimeout also bounds the wait
// for an ack result and the release after a drained body; Plan.RequestTimeout
// is unused. Every duration is a time.Duration; zero means the documented
// default.
type PullPlan struct {
	Plan
	// MaxExtension is ReceiveSettings.MaxExtension. Zero means
	// DefaultMaxExtension; negative turns the extension off, so a message is
	// leased for the subscription's ack deadline only.
	MaxExtension time.Duration
	// MaxExtensionPeriod is ReceiveSettings.MaxDurationPerAckExtension
	// (MaxExtensionPeriod before pubsub v2): the most one extension adds, so the
	// longest a dead subscriber keeps a message from redelivery. Zero means
	// none (the client extends by up to 600 s at a time); else 10 s–600 s.
	MaxExtensionPeriod time.Duration
	// MaxOutstandingMessages is ReceiveSettings.MaxOutstandingMessages: how many
	// callbacks run at once. Zero means BackendConnections when that is set,
	// else DefaultMaxOutstandingMessages; negative means unlimited.
	MaxOutstandingMessages int
	// BackendConnections is how many store calls the backend's client runs at
	// once (the SQL pool's open connections, the Redis pool size). Zero means
	// unbounded (Datastore over gRPC).
	BackendConnections int
	// Drain is how long bodies running at SIGTERM may go on (pull.Options.Drain).
	// Zero means ShutdownGrace minus a release and an ack (two store timeouts).
	Drain time.Duration
}

// WithDefaults returns p with every zero field replaced by its default. A zero
// TTL becomes the redelivery horizon (PullPlan.Horizon) plus the dead-letter
// replay window rounded up to an hour, at least DefaultTTL, as Plan does, so
// invariant 4 holds by construction.
func (p PullPlan) WithDefaults() PullPlan {
	if p.ShutdownGrace == 0 {
		p.ShutdownGrace = DefaultPullShutdownGrace
	}
	if p.MaxExtension == 0 {
		p.MaxExtension = DefaultMaxExtension
	}
	if p.MaxOutstandingMessages == 0 {
		p.MaxOutstandingMessages = DefaultMaxOutstandingMessages
		if p.BackendConnections > 0 {
			p.MaxOutstandingMessages = p.BackendConnections
		}
	}
	ttlZero := p.TTL == 0
	p.Plan = p.Plan.WithDefaults()
	if p.Drain == 0 {
		if d := p.ShutdownGrace - 2*p.StoreTimeout; d > 0 {
			p.Drain = d
		}
	}
	if ttlZero {
		p.TTL = max(DefaultTTL, ceilUnit(addDur(p.held().horizon(), max(p.DeadLetterReplayWindow, 0)), time.Hour))
	}
	return p
}

// Budget is the longest one delivery can take before its ack is sent: the
// push budget (Plan.Budget: claim, work deadline, complete, unknown mark) plus
// the wait for the ack result, one more StoreTimeout (the pull form of
// invariant 5).
func (p PullPlan) Budget() time.Duration {
	return addDur(p.budget(), max(p.StoreTimeout, 0))
}

// Leased is how long the client keeps a received message from redelivery while
// its subscriber lives: MaxExtension, or the ack deadline with the extension off.
func (p PullPlan) Leased() time.Duration {
	if p.MaxExtension < 0 {
		return p.AckDeadline
	}
	return p.MaxExtension
}

// Hold is the longest one delivery attempt keeps the message: the budget of a
// live subscriber, or for one killed mid-message the deadline its last
// extension set (MaxExtensionPeriod, else up to AckDeadlineMax, never below the
// ack deadline).
func (p PullPlan) Hold() time.Duration {
	crash := p.AckDeadline
	if p.MaxExtension >= 0 {
		per := p.MaxExtensionPeriod
		if per == 0 {
			per = AckDeadlineMax
		}
		crash = max(crash, per)
	}
	return max(p.Budget(), crash)
}

// Horizon is invariant 4 with pull's numbers: Plan.Horizon with the hold in
// the ack deadline's place, MaxDeliveryAttempts × Hold + (MaxDeliveryAttempts −
// 1) × MaxBackoff.
func (p PullPlan) Horizon() time.Duration { return p.held().horizon() }

// held is the Plan whose ack deadline is the pull hold, so the push checks of
// the redelivery horizon apply to pull unchanged.
func (p PullPlan) held() Plan {
	q := p.Plan
	q.AckDeadline = p.Hold()
	return q
}

// Validate applies the defaults and checks the shared ranges and invariants
// 1–3 (as Plan.Validate, without the push request's deadlines), then pull's
// own rules: a TTL covering the redelivery horizon with the hold in the ack
// deadline's place (4, Plan's check), the client keeping a message leased for
// the whole budget (5), the runtime's lease and heartbeat floors
// (MinDeployedLease, MinDeployedHeartbeat), the extension period's range, flow control within the
// backend's connections, and a drain that leaves room for the release and the
// nack. It returns nil or a *PlanError naming each fix.
func (p PullPlan) Validate() error {
	var c checker
	r := p.WithDefaults()
	c.signs(p.Plan)
	c.ranges(r.Plan)
	c.invariants(r.Plan)
	c.horizon(r.held())
	c.pull(p, r)
	if len(c.vs) == 0 {
		return nil
	}
	return &PlanError{Violations: c.vs}
}

func (c *checker) pull(p, r PullPlan) {
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"MaxExtensionPeriod", p.MaxExtensionPeriod}, {"Drain", p.Drain}} {
		if f.v < 0 {
			c.add(f.name, "%s must not be negative (got %s); use a positive duration or zero for the default", f.name, fmtDur(f.v))
		}
	}
	if per := r.MaxExtensionPeriod; per != 0 && (per < ExtensionPeriodMin || per > ExtensionPeriodMax) {
		c.add("MaxExtensionPeriod", "MaxExtensionPeriod must be 10s–600s (got %s), the client's range for MaxDurationPerAckExtension; set one in range or zero for none", fmtDur(per))
	}
	// The runtime's floors (gateenv refuses the plan at start-up below them).
	if r.Lease > 0 && r.Lease < MinDeployedLease {
		c.add("Lease", "Lease %s is below the %s floor the pull worker's runtime refuses at start-up (runtime/gateenv); raise it to at least %s", fmtDur(r.Lease), fmtDur(MinDeployedLease), fmtDur(MinDeployedLease))
	}
	if r.Heartbeat > 0 && r.Heartbeat < MinDeployedHeartbeat {
		c.add("Heartbeat", "Heartbeat %s is below the %s floor the pull worker's runtime refuses at start-up (runtime/gateenv); raise it to at least %s (and the lease to at least three times that) or set zero for none", fmtDur(r.Heartbeat), fmtDur(MinDeployedHeartbeat), fmtDur(MinDeployedHeartbeat))
	}
	if r.WorkDeadline <= 0 || r.StoreTimeout <= 0 {
		return
	}
	// Invariant 5, pull form: the message stays leased for the whole budget.
	if b := r.Budget(); b > r.Leased() {
		if r.MaxExtension < 0 {
			c.addInv(5, "AckDeadline", "Subscription ack deadline %s is shorter than the time budget %s (work deadline %s plus a claim, a complete, an unknown mark and an ack result at the %s store timeout) and the client's extension is off, so a message still being processed is redelivered (invariant 5); turn the extension on (MaxExtension at least %s) or lower the work deadline", fmtDur(r.AckDeadline), fmtDur(b), fmtDur(r.WorkDeadline), fmtDur(r.StoreTimeout), fmtDur(b))
		} else {
			c.addInv(5, "MaxExtension", "Client MaxExtension %s is shorter than the time budget %s (work deadline %s plus a claim, a complete, an unknown mark and an ack result at the %s store timeout), so a message still being processed is redelivered (invariant 5); raise MaxExtension to at least %s or lower the work deadline", fmtDur(r.MaxExtension), fmtDur(b), fmtDur(r.WorkDeadline), fmtDur(r.StoreTimeout), fmtDur(b))
		}
	}
	// Flow control within the backend's connections.
	if n, conns := r.MaxOutstandingMessages, r.BackendConnections; conns > 0 && (n < 0 || n > conns) {
		got := fmt.Sprint(n)
		if n < 0 {
			got = "unlimited"
		}
		c.add("MaxOutstandingMessages", "MaxOutstandingMessages %s exceeds the backend's %d connections, so claims and completions queue for a connection past the %s store timeout (a completion that times out leaves the record unknown); lower it to %d or raise the pool to %s", got, conns, fmtDur(r.StoreTimeout), conns, got)
	}
	// Shutdown: the drain, a release and an ack fit the platform's grace.
	room := r.ShutdownGrace - 2*r.StoreTimeout
	switch {
	case p.Drain < 0 || r.ShutdownGrace <= 0:
	case room <= 0:
		c.add("ShutdownGrace", "Shutdown grace %s leaves no drain after a release and an ack (%s store timeout each), so every body running at SIGTERM is cut at once; raise the grace (terminationGracePeriodSeconds) above %s or lower the store timeout", fmtDur(r.ShutdownGrace), fmtDur(r.StoreTimeout), fmtDur(2*r.StoreTimeout))
	case r.Drain > room:
		c.add("Drain", "Drain %s plus a release and an ack (%s store timeout each) must fit the shutdown grace %s, or the platform kills the worker before it nacks; lower the drain to %s or raise the shutdown grace to %s", fmtDur(r.Drain), fmtDur(r.StoreTimeout), fmtDur(r.ShutdownGrace), fmtDur(room), fmtDur(addDur(r.Drain, 2*r.StoreTimeout)))
	}
}
