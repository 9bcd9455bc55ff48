// Package e2e holds the end-to-end suite: Google's Pub/Sub fake (pstest) with
// the topology the components deploy, the project's push bridge, a front end
// that spreads pushes over reference-worker processes like Cloud Run's (and
// loses or abandons a response on cue), the recording supplier, and real
// backends — Redis, PostgreSQL, the Datastore fake and SQLite. The workers are
// real processes (the test binary itself, see TestMain), so a crash is a real
// SIGKILL. Durations are scaled down through the plan, never by patching code.
//
// Scenarios, each a test run against every backend (parallel subtests):
//
//   - TestTransportRedelivery: a push whose ack is lost is redelivered; one order.
//   - TestConcurrentDelivery: a redelivery reaches a second worker while the first
//     still runs; one body, the other nacked (503) and then acked as a duplicate.
//   - TestTwoSubscriptions: two subscriptions of one topic feed one namespace; one
//     order per message.
//   - TestNackThenSuccess: a supplier failing twice; one order, acked on the third
//     delivery.
//   - TestMutex: status updates of one entity under ONCEGATE_MODE=mutex are each
//     applied once and never overlap (with a control showing the probe sees
//     overlaps when the mutex is off).
//   - TestCrashStorm: 4 workers, 2,000 orders, a quarter duplicated by republish
//     and by lost acks, workers killed with SIGKILL at random moments and
//     restarted; every order reaches the supplier, and every supplier call beyond
//     one per order is explained by a kill inside the window between the call
//     and the done record. A control runs a small storm with the gateway switched
//     off (ONCEGATE_DISABLED=1) and expects the accounting to flag extra calls.
//   - TestPoisonMessage: dead-lettered after exactly the plan's max delivery
//     attempts.
//   - TestSizingProof: a holder killed right after claiming; with the plan's max
//     delivery attempts the message is processed once after the lease lapses; with
//     fewer (a drifted subscription) it is dead-lettered.
//
// Every scenario logs its figures (messages, deliveries, bodies, supplier orders,
// kills, dead letters).
//
// Environment:
//
//   - Without an explicit -parallel, the suite runs 4 subtests at once (one per
//     backend): the scenarios mostly wait on backoff timers.
//   - -short runs each scenario on one backend (rotating, so the short suite still
//     touches every backend) and a 200-order storm.
//   - ONCEGATE_E2E_FULL=1 runs the 2,000-order storm on every backend; by default
//     it runs on PostgreSQL and a 300-order storm runs on the others.
//   - ONCEGATE_E2E_BACKENDS=redis,postgres,datastore,sqlite restricts the backends.
//   - ONCEGATE_E2E_SEED=n fixes the storm's random choices (kill moments, victims,
//     duplicated orders); by default the seed is drawn and logged.
//   - ONCEGATE_E2E_RELIABILITY=path rewrites the crash-storm figures between the
//     markers of that file (docs/RELIABILITY.md).
//
// Reproduce the documented crash storm:
//
//	ONCEGATE_E2E_FULL=1 ONCEGATE_E2E_RELIABILITY=$PWD/docs/RELIABILITY.md \
//	  go test -race -count=1 -run TestCrashStorm -v ./tests/
package e2e
