// Package e2e holds the end-to-end suite: Pub/Sub with the topology the
// components deploy, a front end that spreads pushes over reference-worker
// processes like Cloud Run's (and loses or abandons a response on cue), the
// recording supplier, and real backends — Redis, PostgreSQL, Google's
// Datastore emulator and SQLite. The workers are real processes (the test binary itself, see
// TestMain), so a crash is a real SIGKILL. Durations are scaled down through
// the plan, never by patching code.
//
// Pub/Sub is one of two:
//
//   - the emulator: Google's Pub/Sub emulator (the Java process,
//     testenv.PubSubEmulator, one per test binary) pushing to the front end
//     with its own push loops, retry policy and dead-letter policy. The topic,
//     the push subscription (ack deadline, retry policy and dead-letter policy
//     from the plan, as components/subscription.go sets them; push endpoint the
//     front end) and the dead-letter topic with its pull subscription are
//     created through the pubsub/v2 admin clients. No project code redelivers,
//     counts attempts or dead-letters on this path. TestCrashStorm/emulator,
//     TestSizingProof, TestPoisonMessage and TestEmulatorRetryPolicy run here.
//   - pstest, Google's in-process fake, which does not push and ignores retry
//     and dead-letter policies, with the project's push bridge
//     (internal/pushbridge) pulling from it and re-implementing both. It stays
//     for what the emulator cannot do: a storm with the retry policy on (the
//     stall below), 16 pushes in flight (the emulator pushes one message at a
//     time on each of its 2 loops per subscription), a deliveryAttempt field in
//     the envelope (the emulator sends none, so the front end numbers the
//     emulator's pushes itself), a push timeout at the ack deadline (the
//     emulator has none; the front end's Detach route plays it), several
//     subscriptions on one topic (not wired for the emulator yet), and a world
//     with no Java. TestTransportRedelivery, TestConcurrentDelivery,
//     TestTwoSubscriptions, TestNackThenSuccess and TestMutex still run only
//     here: they check the gateway's answers to deliveries the front end shapes
//     (a lost ack, an abandoned push, a failing supplier), and their routes
//     pick a delivery by the envelope's deliveryAttempt, which the emulator
//     does not send; moving them is open work.
//
// The emulator (0.8.20) differs from production Pub/Sub in ways the suite
// designs around, each pinned by a test:
//
//   - Its retry policy can stall a subscription (TestEmulatorRetryPolicyStall
//     reproduces it and skips while it is present). A nacked message that has
//     had more than one delivery waits in a map keyed by its redelivery time
//     in milliseconds (now + the backoff in whole seconds); every pull re-adds
//     each expired message unless its key already holds exactly that one ack
//     id. Two messages nacked in one millisecond with the same backoff share a
//     key, so both are re-added at a new time on the next pull: one ack id is
//     scheduled twice, the second redelivery finds it gone, and the periodic
//     redelivery task dies with the exception and never runs again. Every
//     delayed message of that subscription then waits forever and nothing is
//     dead-lettered (3 messages nacked together: 3 pushes each, then nothing).
//     A single failing message never meets another in one millisecond, so the
//     sizing proof, the poison message and TestEmulatorRetryPolicy keep the
//     components' retry policy; the storm, where thousands of nacks meet, runs its push
//     subscription without one.
//   - Without a retry policy it redelivers a refused push after about 1 s
//     (the push loop sets a 1 s ack deadline on failure), and its dead-letter
//     policy counts and dead-letters as usual. The storm's plan has a 1 s
//     minimum backoff, so its sizing holds on that path too. Production
//     Pub/Sub without a retry policy redelivers at once, which is why the
//     components always set one.
//   - With a retry policy the first redelivery still comes after about 1 s,
//     whatever the minimum backoff, and each later one after about 1 s plus
//     the backoff plus up to 1 s (the task runs once a second): about 3 s for
//     a 1 s backoff. The gaps are never shorter than the minimum backoff, the
//     conservative model's assumption, so a plan's attempts are enough; they
//     are longer, so the sizing proof's control uses a 20 s lease that 5
//     attempts (about 10 s) cannot cover.
//   - It acks 102, 200, 201, 203 and 204; Google documents 102, 200, 201, 202
//     and 204 (https://cloud.google.com/pubsub/docs/push). It sets no timeout
//     on a push, where production gives up at the ack deadline (same page).
//     It sends no deliveryAttempt (production sends it when the subscription
//     has a dead-letter policy, https://cloud.google.com/pubsub/docs/handling-failures).
//   - A dead letter is a new message on the dead-letter topic with a new
//     message id and the CloudPubSubDeadLetterSource* attributes; the suite
//     finds its source by an attribute it sets on every message (e2e_seq).
//
// Deliveries lost to instance restarts: the front end holds a push while no
// worker is ready, up to 10 s, as Cloud Run holds a pending request while it
// starts an instance (TestFrontEndHoldsWhileNoWorkerIsReady), and sends a push
// whose connection is refused to the next worker. A restart therefore costs a
// message only the push that was inside the killed worker, as on Cloud Run,
// and the plan's Margin (2 deliveries, sizing.Margin) budgets those; the
// plan adds nothing for restarts. The storm reports the pushes lost to a
// crash and the most one message lost, beside the most deliveries one message
// took against the subscription's max delivery attempts.
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
//     and the done record. It runs on both Pub/Subs (TestCrashStorm/pstest/<backend>,
//     TestCrashStorm/emulator/<backend>). A control runs a small storm with the
//     gateway switched off (ONCEGATE_DISABLED=1) and expects the accounting to
//     flag extra calls.
//   - TestPoisonMessage, on the emulator: dead-lettered after exactly the plan's
//     max delivery attempts, the dead letter saying so.
//   - TestSizingProof, on the emulator: a holder killed right after claiming;
//     with the plan's max delivery attempts the message is processed once after
//     the lease lapses; with fewer (a drifted subscription) the emulator
//     dead-letters it.
//   - TestEmulatorRetryPolicy: the emulator's retry and dead-letter policies do
//     what the sizing proof relies on (exact attempts, no gap below the minimum
//     backoff, the dead letter's delivery count).
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
//   - ONCEGATE_E2E_FULL=1 runs the 2,000-order storm on every backend and both
//     Pub/Subs; by default on pstest it runs on PostgreSQL and a 300-order storm
//     on the others, and on the emulator a 300-order storm on every backend.
//   - Under CI=true a missing emulator fails the tests that need it; outside CI
//     they skip, naming the Debian package (google-cloud-cli-pubsub-emulator).
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
