// Package sizing is the invariant math shared by the oncegate runtime and its
// Pulumi components: one Plan of leases, deadlines, backoffs and delivery
// attempts, checked once and handed unchanged from infrastructure to the
// running gateway.
//
// A Plan is safe when five invariants hold (see docs/design.md, "Invariants and
// the sizing model"):
//
//  1. The lease outlives the guarded work: Lease > WorkDeadline, or a
//     Heartbeat of at most a third of the lease renews it while the work runs.
//  2. Lease + TTL > WorkDeadline + ShutdownGrace, the longest a holder can
//     live, so a reclaim bumps the fence instead of a fresh record resetting it.
//  3. MaxDeliveryAttempts covers the longest a healthy message can be nacked
//     while it waits behind a live or crashed holder. W, that wait, is the
//     lease when no heartbeat runs, and work deadline plus one heartbeat
//     interval plus the lease when one does (Plan.Wait). The conservative
//     model assumes every retry comes after exactly the minimum backoff and
//     needs ⌈W / MinBackoff⌉ + 1 + Margin attempts (Attempts.Required), plus
//     ⌈StoreOutage / MinBackoff⌉ for the store outage the plan budgets: while
//     the store is unreachable every delivery is nacked (fail closed) and
//     spent. Attempts.RideOut reports how long an outage the configured
//     attempts ride out.
//  4. TTL ≥ the redelivery horizon plus DeadLetterReplayWindow, so the done
//     record outlives every delivery Pub/Sub (or an operator replaying dead
//     letters) may still make. The horizon (Plan.Horizon) is
//     MaxDeliveryAttempts × AckDeadline + (MaxDeliveryAttempts − 1) ×
//     MaxBackoff: every delivery may run until its ack deadline and every
//     retry may wait the maximum backoff, since Pub/Sub's backoff is best
//     effort. Invariant 3 trusts the minimum backoff for how soon attempts
//     run out; invariant 4 trusts the maximum for how long a message lives.
//  5. The time budget fits the push request: StoreTimeout (the claim) +
//     WorkDeadline + StoreTimeout (the complete, retried within it) +
//     StoreTimeout (the unknown mark) ≤ AckDeadline and ≤ RequestTimeout
//     (Plan.Budget), so the answer for a processed message, recorded done or
//     unknown, reaches Pub/Sub while it still waits. A later answer is a nack:
//     the redelivery would repeat the work if the record stayed claimed.
//
// Validate also enforces the documented Pub/Sub and Cloud Run ranges, and
// explains every violation in one sentence that names the numbers and the fix
// (Violation.Invariant says which invariant it breaks). Zero fields resolve so
// that the plan satisfies invariants 4 and 5 by construction: the ack deadline
// and the request timeout default to the time budget, the TTL to the horizon.
// Recommend completes a partial plan. Env and FromEnv carry a plan through the
// ONCEGATE_* environment variables of the configuration contract, so the
// runtime re-checks at start-up exactly the plan the components deployed.
//
// The package has no dependencies beyond the standard library.
package sizing
