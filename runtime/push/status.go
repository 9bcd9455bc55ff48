package push

import (
	"net/http"

	"github.com/oncegate/oncegate/runtime/gate"
)

// Status returns the HTTP status an adapter answers for a verb's outcome, following
// docs/design.md's ack policy. Only 102, 200, 201, 202 and 204 acknowledge a push
// (Pub/Sub, "Push subscriptions": receiving messages); every other status is a
// nack, redelivered with the subscription's retry backoff and dead-lettered after
// its maximum delivery attempts.
//
//	ran, duplicate, permanent,
//	not-recorded, fenced-out   204 No Content (ack)
//	in-progress                503 Service Unavailable (nack: retry later)
//	body-failed                500 Internal Server Error (nack)
//	unknown                    503 Service Unavailable (nack: reconcile the key)
//	store-unavailable          503 Service Unavailable (nack: fail closed)
//	rejected                   409 Conflict (nack: key reuse, invalid key or fence
//	                           exhausted; retrying cannot help, so the message
//	                           reaches the dead-letter topic, which keeps it)
//	error (anything else)      500 Internal Server Error (nack)
//
// The adapters answer these before any verb runs: 400 for a malformed envelope
// or a key over MaxKeyBytes,
// 413 past the size limit, 503 when the request ended waiting for a body-read
// slot, 503 when the body could not be read (outcome "read-failed": the server's
// read deadline passed mid-body, the connection broke, the body was cut short;
// a nack the retry policy redelivers, since nothing says the envelope is
// malformed), 401 or 403 for a failed OIDC check, 405 for a method
// other than POST, and 500 when no key is resolvable and unguarded runs are not
// allowed.
func Status(o gate.Outcome) int {
	switch o {
	case gate.OutcomeRan, gate.OutcomeDuplicate, gate.OutcomePermanent,
		gate.OutcomeNotRecorded, gate.OutcomeFencedOut:
		return http.StatusNoContent
	case gate.OutcomeInProgress, gate.OutcomeUnknown, gate.OutcomeStoreUnavailable:
		return http.StatusServiceUnavailable
	case gate.OutcomeRejected:
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// Acks reports whether a push answered with status is acknowledged by Pub/Sub.
func Acks(status int) bool {
	switch status {
	case http.StatusProcessing, http.StatusOK, http.StatusCreated, http.StatusAccepted, http.StatusNoContent:
		return true
	}
	return false
}

// HeaderOutcome is the response header that names the outcome ("ran",
// "duplicate", "in-progress", …, or an adapter refusal such as "malformed"), for
// relays, tests and request logs.
const HeaderOutcome = "X-Oncegate-Outcome"

// Adapter refusals: outcomes an adapter answers before any verb runs.
const (
	OutcomeMalformed       = "malformed"
	OutcomeTooLarge        = "too-large"
	OutcomeUnauthenticated = "unauthenticated"
	OutcomeForbidden       = "forbidden"
	OutcomeNoKey           = "no-key"
	OutcomeBadMethod       = "bad-method"
	// OutcomeBusy: the request ended while waiting for one of the Guard's
	// MaxConcurrentReads body-read slots (503, a nack).
	OutcomeBusy = "busy"
	// OutcomeReadFailed: the request body could not be read in full (a read
	// deadline such as gateenv's Config.Serve sets, a broken connection, a
	// body shorter than its Content-Length): 503, a nack, before any claim.
	OutcomeReadFailed = "read-failed"
	// OutcomeKeyTooLong: the derived key is longer than MaxKeyBytes (400, a
	// nack, before any claim).
	OutcomeKeyTooLong = "key-too-long"
)
