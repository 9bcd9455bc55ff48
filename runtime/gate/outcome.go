package gate

import (
	"errors"
	"log/slog"
)

// Outcome is every answer an adapter gives a delivery: a verb's outcome, or a
// refusal before any verb ran. It is the one code type of the ack policy (in
// the spirit of gocloud's gcerrors.ErrorCode): its name (String, the
// X-Oncegate-Outcome header value), whether it acks (Ack), the HTTP status a
// push adapter answers (HTTPStatus) and the level of its log line (LogLevel)
// all come from one table, docs/design.md's "The ack table".
type Outcome int

// The outcomes, in the order of the ack table. The first eleven are the
// verbs' (OutcomeOf and Result.Outcome give them); the rest are refusals an
// adapter answers before any verb runs: nothing was claimed, the body did not
// run, and every one is a nack.
const (
	// OutcomeRan: the body ran and its record was written. Ack, 204.
	OutcomeRan Outcome = iota
	// OutcomeDuplicate: the key was already done. Ack, 204.
	OutcomeDuplicate
	// OutcomeInProgress: a live holder elsewhere. Nack (retry later), 503, one
	// warning line.
	OutcomeInProgress
	// OutcomeBodyFailed: the body returned an error; the claim was released.
	// Nack, 500.
	OutcomeBodyFailed
	// OutcomePermanent: the body's error was marked Permanent, or the key failed
	// permanently before. Ack (retrying cannot help), 204.
	OutcomePermanent
	// OutcomeNotRecorded: the body ran but the done record was not written. Ack
	// (never repeat a send), 204; an error was logged.
	OutcomeNotRecorded
	// OutcomeFencedOut: the body ran but a newer holder took the key. Ack, 204;
	// an alertable error was logged.
	OutcomeFencedOut
	// OutcomeUnknown: the key's outcome is unknown and must be reconciled. Nack
	// (the dead-letter topic keeps the message), 503.
	OutcomeUnknown
	// OutcomeStoreUnavailable: the claim could not be made. Nack (fail closed),
	// 503.
	OutcomeStoreUnavailable
	// OutcomeRejected: the call was refused before any claim (invalid key, key
	// reuse, fence exhausted). Nack, 409, so the dead-letter topic keeps the
	// message.
	OutcomeRejected
	// OutcomeError: any other error. Nack, 500.
	OutcomeError

	// OutcomeMalformed: the request is not a valid envelope or event. 400.
	OutcomeMalformed
	// OutcomeTooLarge: the body or the message data is over the size limit. 413.
	OutcomeTooLarge
	// OutcomeUnauthenticated: the OIDC token is missing or invalid. 401.
	OutcomeUnauthenticated
	// OutcomeForbidden: the OIDC token is valid but names another account. 403.
	OutcomeForbidden
	// OutcomeNoKey: no key is resolvable and unguarded runs are not allowed
	// (fail closed). 500.
	OutcomeNoKey
	// OutcomeBadMethod: a method other than POST. 405.
	OutcomeBadMethod
	// OutcomeBusy: the request ended while waiting for a body-read slot. 503.
	OutcomeBusy
	// OutcomeReadFailed: the body could not be read in full (a read deadline, a
	// broken connection, a body shorter than its Content-Length); nothing says
	// the envelope is malformed, so 503, which the retry policy redelivers.
	OutcomeReadFailed
	// OutcomeKeyTooLong: the derived key is longer than the adapter's limit. 400.
	OutcomeKeyTooLong
	// OutcomeStopping: a pull subscriber received the message after it began
	// to stop; nacked so another subscriber takes it. (503 over HTTP, which no
	// push adapter answers.)
	OutcomeStopping

	numOutcomes
)

// outcomeRow is one line of the ack table.
type outcomeRow struct {
	name   string
	ack    bool
	status int // HTTP status code
	level  slog.Level
}

// ackTable is the ack policy, written once. Only 102, 200, 201, 202 and 204
// acknowledge a push (Pub/Sub, "Push subscriptions": receiving messages);
// every other status is a nack, redelivered with the subscription's retry
// backoff and dead-lettered after its maximum delivery attempts.
var ackTable = [numOutcomes]outcomeRow{
	OutcomeRan:              {"ran", true, 204, slog.LevelInfo},
	OutcomeDuplicate:        {"duplicate", true, 204, slog.LevelInfo},
	OutcomeInProgress:       {"in-progress", false, 503, slog.LevelWarn},
	OutcomeBodyFailed:       {"body-failed", false, 500, slog.LevelError},
	OutcomePermanent:        {"permanent", true, 204, slog.LevelError},
	OutcomeNotRecorded:      {"not-recorded", true, 204, slog.LevelError},
	OutcomeFencedOut:        {"fenced-out", true, 204, slog.LevelError},
	OutcomeUnknown:          {"unknown", false, 503, slog.LevelError},
	OutcomeStoreUnavailable: {"store-unavailable", false, 503, slog.LevelError},
	OutcomeRejected:         {"rejected", false, 409, slog.LevelError},
	OutcomeError:            {"error", false, 500, slog.LevelError},
	OutcomeMalformed:        {"malformed", false, 400, slog.LevelWarn},
	OutcomeTooLarge:         {"too-large", false, 413, slog.LevelWarn},
	OutcomeUnauthenticated:  {"unauthenticated", false, 401, slog.LevelWarn},
	OutcomeForbidden:        {"forbidden", false, 403, slog.LevelWarn},
	OutcomeNoKey:            {"no-key", false, 500, slog.LevelError},
	OutcomeBadMethod:        {"bad-method", false, 405, slog.LevelWarn},
	OutcomeBusy:             {"busy", false, 503, slog.LevelWarn},
	OutcomeReadFailed:       {"read-failed", false, 503, slog.LevelWarn},
	OutcomeKeyTooLong:       {"key-too-long", false, 400, slog.LevelError},
	OutcomeStopping:         {"stopping", false, 503, slog.LevelWarn},
}

// invalidRow answers for a value outside the table: a nack, 500, an error.
var invalidRow = outcomeRow{"invalid", false, 500, slog.LevelError}

func (o Outcome) row() *outcomeRow {
	if o < 0 || o >= numOutcomes {
		return &invalidRow
	}
	return &ackTable[o]
}

// String returns the outcome's name ("ran", "duplicate", "in-progress", …,
// "malformed", …), the X-Oncegate-Outcome header value; "invalid" outside the
// table.
func (o Outcome) String() string { return o.row().name }

// Ack reports whether an adapter acknowledges the message for this outcome.
func (o Outcome) Ack() bool { return o.row().ack }

// HTTPStatus returns the status code a push or CloudEvent adapter answers for
// this outcome: 204 exactly for the outcomes that ack.
func (o Outcome) HTTPStatus() int { return o.row().status }

// LogLevel returns the level of an adapter's one line for this outcome: info
// for an ack that needs no attention, warning for an expected retry or a
// refused request, error for anything an operator must look at.
func (o Outcome) LogLevel() slog.Level { return o.row().level }

// Outcomes returns every outcome in table order, for tests and documentation.
func Outcomes() []Outcome {
	out := make([]Outcome, numOutcomes)
	for i := range out {
		out[i] = Outcome(i)
	}
	return out
}

// OutcomeOf classifies an error returned by Lock, Mutex or Do. It agrees with
// Result.Outcome for the verbs' own answers.
func OutcomeOf(err error) Outcome {
	var be *BodyError
	switch {
	case err == nil:
		return OutcomeRan
	case errors.As(err, &be):
		// First: a body's error may wrap a gate sentinel of its own (a nested
		// Lock's ErrDuplicate), which says nothing about this call.
		return bodyOutcome(be.Err)
	case errors.Is(err, ErrDuplicate):
		return OutcomeDuplicate
	case errors.Is(err, ErrInProgress):
		return OutcomeInProgress
	case errors.Is(err, ErrFailed):
		return OutcomePermanent
	case errors.Is(err, ErrNotRecorded):
		return OutcomeNotRecorded
	case errors.Is(err, ErrFencedOut):
		return OutcomeFencedOut
	case errors.Is(err, ErrUnknownOutcome):
		return OutcomeUnknown
	case errors.Is(err, ErrStoreUnavailable):
		return OutcomeStoreUnavailable
	case errors.Is(err, ErrInvalidKey), errors.Is(err, ErrKeyReuse), errors.Is(err, ErrFenceExhausted):
		return OutcomeRejected
	}
	return OutcomeError
}

// bodyOutcome is the outcome of a body that returned err (non-nil).
func bodyOutcome(err error) Outcome {
	if IsPermanent(err) {
		return OutcomePermanent
	}
	return OutcomeBodyFailed
}
