// Package sizing is the invariant math shared by the oncegate runtime and its
// Pulumi components: one Plan of leases, deadlines, backoffs and delivery
// attempts, checked once and handed unchanged from infrastructure to the
// running gateway.
//
// A Plan is safe when three invariants hold (see docs/design.md, "Invariants and
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
//     needs ⌈W / MinBackoff⌉ + 1 + Margin attempts (Attempts.Required).
//
// Validate also enforces the documented Pub/Sub and Cloud Run ranges, and
// explains every violation in one sentence that names the numbers and the fix.
// Recommend completes a partial plan. Env and FromEnv carry a plan through the
// ONCEGATE_* environment variables of the configuration contract, so the
// runtime re-checks at start-up exactly the plan the components deployed.
//
// The package has no dependencies beyond the standard library.
package sizing
