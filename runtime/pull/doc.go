// Package pull is oncegate's adapter for Pub/Sub pull subscribers: it wraps the
// callback of cloud.google.com/go/pubsub/v2's Subscriber.Receive so the work runs
// at most once per idempotency key (ModeLock, the default, and ModeDo, the effect
// ledger) or one at a time per key (ModeMutex), and maps every outcome onto
// Ack or Nack exactly as docs/design.md's ack table maps it onto an HTTP status
// for push (gate.Outcome.Ack):
//
//	ran, duplicate              Ack
//	permanent                   Ack (the record says failed; retrying cannot help)
//	not-recorded, fenced-out    Ack, error logged (never repeat a send)
//	in-progress                 Nack, one warning line (a live holder elsewhere)
//	body-failed                 Nack (redelivered with the retry policy's backoff); also a body that panicked
//	unknown                     Nack, error "reconcile key …" (the dead-letter topic keeps it)
//	store-unavailable           Nack without running (fail closed)
//	rejected                    Nack (key reuse, invalid key, fence exhausted)
//	no key resolvable           Nack without a claim (fail closed)
//	stopping (see below)        Nack without a claim
//
// The key comes from Options.KeyFunc, the same push.KeyFunc the push adapter
// takes, applied to the message as a push.Message: push.MessageIDKey (the
// default, stored as "<namespace>:<messageId>") or push.AttributeKey for a
// business key. The body receives that read-only push.Message and never the
// *pubsub.Message, so it cannot ack on its own.
//
// # Panics
//
// The Pub/Sub client runs each callback on a goroutine of its own and does not
// recover a panic there, so left alone one panicking message would end the
// worker process: every message in flight would wait out its lease, and the
// redelivered message would take down the next worker (a poison message that
// never reaches the dead-letter topic). The Receiver recovers a body's panic
// instead: the gate releases the claim, the message is nacked as body-failed
// (a *PanicError, matching ErrBodyPanic), and its one line is at error level
// with panic=true, the panic value in err and the goroutine's stack (never the
// payload). The retry policy redelivers it, each delivery at a higher fence, and
// after the subscription's maximum delivery attempts Pub/Sub moves it to the
// dead-letter topic; other messages keep being processed. A KeyFunc that panics
// is likewise nacked without a claim (no-key). The push adapter differs on
// purpose: there the gate releases the claim and re-panics into net/http,
// which recovers it per request and drops the connection (a nack).
//
// # Exactly-once delivery
//
// Every ack and nack goes through AckWithResult / NackWithResult and the
// Receiver waits (up to Options.AckTimeout) for the result. On a subscription
// with exactly-once delivery enabled that result is the server's answer; without
// it the client resolves it at once as a success. A failed ack (an expired ack id,
// a permission error) is logged as what it is: Pub/Sub will redeliver the
// message, and under ModeLock or ModeDo the gate's done record makes that
// redelivery a duplicate that is acked without running. Under ModeMutex every
// delivery runs, so a failed ack there means the body runs again.
//
// What exactly-once delivery adds (Pub/Sub, "Exactly-once delivery",
// https://cloud.google.com/pubsub/docs/exactly-once-delivery): for pull
// subscriptions only, within one cloud region and keyed by Pub/Sub's message id,
// a message whose ack succeeded is not redelivered, a message is not redelivered
// while it is outstanding, only the latest ack id of a redelivered message
// acks it, and the subscriber learns whether its ack took. What it leaves to
// the subscriber, and the gate does: that page asks subscribers to keep the
// progress of processing a message until its ack succeeds and to use it to
// avoid duplicate work when an ack fails. The gate is that record: it survives
// a crash between the side effect and the ack, de-duplicates a message
// republished under a new message id (a business key), fences a stale holder
// out of downstream writes, keeps a stored result (ModeDo), and works across
// regions and for push. Exactly-once delivery is not required; with it the gate
// sees fewer redeliveries.
//
// # Shutdown
//
// Receiver.Receive runs Subscriber.Receive until its context is done (for a
// worker, SIGTERM: signal.NotifyContext). Then it stops receiving: the client
// stops pulling, and a callback that has not yet claimed its key nacks without
// claiming. Bodies already running keep going for Options.ShutdownGrace; then
// their context is cancelled with a cause matching ErrShutdown. Whatever a body
// returns decides the ack as above, so a body cut short (an error) is nacked and
// its claim released, and no message is ever acked unless its body finished
// (returned nil, or a permanent error). Receive returns after every callback has
// returned. A body that ignores its context keeps its message un-acked until the
// platform kills the process; Pub/Sub redelivers it after its ack deadline and
// the lease (invariant 1) keeps it from running twice at once.
//
// # Sizing
//
// The lease, ttl and delivery attempts follow the same invariants as push, with
// pull's numbers: the client's ack-deadline extension (MaxExtension,
// MaxDurationPerAckExtension, called MaxExtensionPeriod before pubsub v2) and
// flow control (MaxOutstandingMessages) against the backend's connections. See
// sizing.PullPlan; ReceiveSettings turns a checked plan into the client's
// settings, and runtime/gateenv/pullenv's New reads it from the environment.
package pull
