// Package push is oncegate's adapter for Pub/Sub push subscriptions: an
// http.Handler that runs a handler function at most once per idempotency key
// (or one at a time per key) and answers HTTP so that Pub/Sub acks or nacks the
// message exactly as docs/design.md's ack policy says.
//
// # Request handling
//
// For each request the handler, in order:
//
//  1. refuses a method other than POST (405);
//  2. verifies the OIDC token when AdapterOptions.OIDC is set (401 or 403),
//     before anything is read or claimed;
//  3. reads the body up to MaxBodyBytes(Options.MaxDataBytes) (413 past it, or
//     at once when Content-Length declares more), holding one of
//     AdapterOptions.MaxConcurrentReads read slots (503 "busy" when the
//     request ends waiting for one); the buffer grows as bytes arrive, and a
//     declared length sizes only a first buffer of at most 4 KiB;
//  4. parses the envelope (400 when malformed): the wrapped JSON form
//     (ParseEnvelope) or the unwrapped "no wrapper" form with its
//     x-goog-pubsub-* headers (ParseUnwrapped); data over Options.MaxDataBytes
//     is 413;
//  5. derives the key with Options.KeyFunc (default: the message id, stored as
//     "<namespace>:<messageId>"); no usable key fails closed with 500 and no
//     claim, unless AdapterOptions.AllowUnguarded; a key over
//     AdapterOptions.MaxKeyBytes (DefaultMaxKeyBytes, 1,024 bytes) is 400 with
//     no claim;
//  6. runs the function through gate.Run (gate.Lock's path under ModeLock,
//     gate.Mutex's under ModeMutex) and answers from the Result's outcome: 204
//     for ran, duplicate, permanent, not-recorded and fenced-out (acks); 503 for
//     in-progress, unknown and store-unavailable; 500 for body-failed; 409 for
//     rejected.
//
// Every answer, refusals included, is one gate.Outcome: its status, its ack
// and its log level come from gate's ack table (gate.Outcome's HTTPStatus,
// Ack and LogLevel), and the X-Oncegate-Outcome header names it.
//
// # Telemetry
//
// One slog line per delivery, at the ack table's level, with key, fence,
// outcome, status, mode, message_id
// and delivery_attempt, never payload bytes; a key, message id or error text
// longer than MaxLoggedBytes is cut to its head, length and SHA-256 prefix, so
// one line stays far below Cloud Logging's 256 KB entry limit: info for ran and duplicate, one
// warning line for in-progress (no stack trace), error for the rest (fenced-out
// carries alert=true; unknown says "reconcile key …"). Error text returned by the
// handler function is logged as is, so it should not quote the payload either.
// OpenTelemetry metrics and spans go through the otel API (see runtime/telemetry);
// no exporter is required. The claim and body spans are children of the
// delivery's process span and are recorded only when it is (a sampled
// trace); the body's context carries the process span either way.
//
// # Extending
//
// Guard is the envelope-independent engine: NewGuard takes a Parser that turns
// a request into a Delivery (key, ids, bound work). runtime/cloudevent builds its
// Eventarc handler on it.
package push
