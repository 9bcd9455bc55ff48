package sizing

import "time"

// Horizon returns the redelivery horizon of p with defaults applied: the
// longest time after a message's first delivery that Pub/Sub may still deliver
// it under the plan,
//
//	MaxDeliveryAttempts × AckDeadline + (MaxDeliveryAttempts − 1) × MaxBackoff.
//
// Every delivery may run until the ack deadline before Pub/Sub counts it as
// failed (an answer that comes later is a nack), and every retry is assumed to
// wait the maximum backoff: Pub/Sub implements its retry policy "on a best
// effort basis … delay can be more or less than configured backoff" (Pub/Sub
// API reference, RetryPolicy,
// https://cloud.google.com/pubsub/docs/reference/rest/v1/projects.subscriptions#retrypolicy;
// "Handle message failures", https://cloud.google.com/pubsub/docs/handling-failures),
// so for how long a message lives the direction that makes it longest is the
// one to trust, where invariant 3, about how soon attempts run out, trusts the
// minimum. The done record must outlive the horizon (invariant 4): a record
// that expires first lets a late redelivery run the work again. The sum
// saturates instead of overflowing.
func (p Plan) Horizon() time.Duration { return p.WithDefaults().horizon() }

// horizon is Horizon on a plan whose defaults are already applied.
func (p Plan) horizon() time.Duration {
	n := max(p.MaxDeliveryAttempts, 0)
	return addDur(mulDur(max(p.AckDeadline, 0), n), mulDur(max(p.MaxBackoff, 0), n-1))
}

// Budget returns the time budget of one delivery of p with defaults applied:
// a claim, the work and the two store phases after it (the complete with its
// retries, then the unknown mark), each store phase bounded by StoreTimeout,
//
//	StoreTimeout + WorkDeadline + StoreTimeout + StoreTimeout.
//
// It must fit inside the ack deadline and the Cloud Run request timeout
// (invariant 5), so the gateway's answer for a processed message, recorded
// done or unknown, always reaches Pub/Sub while it still waits for it. The sum
// saturates instead of overflowing.
func (p Plan) Budget() time.Duration { return p.WithDefaults().budget() }

// budget is Budget on a plan whose StoreTimeout is resolved.
func (p Plan) budget() time.Duration {
	return addDur(max(p.WorkDeadline, 0), mulDur(max(p.StoreTimeout, 0), StoreCallsPerDelivery))
}
