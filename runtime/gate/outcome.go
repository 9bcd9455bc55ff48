package gate

import (
	"errors"
)

// Outcome classifies a verb's answer for the ack policy (docs/design.md, "Error and ack
// policy").
type Outcome int

// The outcomes, in the order of the ack-policy table.
const (
	// OutcomeRan: the body ran and its record was written. Ack.
	OutcomeRan Outcome = iota
	// OutcomeDuplicate: the key was already done. Ack.
	OutcomeDuplicate
	// OutcomeInProgress: a live holder elsewhere. Nack (retry later).
	OutcomeInProgress
	// OutcomeBodyFailed: the body returned an error; the claim was released. Nack.
	OutcomeBodyFailed
	// OutcomePermanent: the body's error was marked Permanent, or the key failed
	// permanently before. Ack (retrying cannot help).
	OutcomePermanent
	// OutcomeNotRecorded: the body ran but the done record was not written. Ack
	// (never repeat a send); an error was logged.
	OutcomeNotRecorded
	// OutcomeFencedOut: the body ran but a newer holder took the key. Ack; an
	// alertable error was logged.
	OutcomeFencedOut
	// OutcomeUnknown: the key's outcome is unknown and must be reconciled. Nack
	// (the dead-letter topic keeps the message).
	OutcomeUnknown
	// OutcomeStoreUnavailable: the claim could not be made. Nack (fail closed).
	OutcomeStoreUnavailable
	// OutcomeRejected: the call was refused before any claim (invalid key, key
	// reuse, fence exhausted). Nack, so the dead-letter topic keeps the message.
	OutcomeRejected
	// OutcomeError: any other error. Nack.
	OutcomeError
)

var outcomeNames = [...]string{"ran", "duplicate", "in-progress", "body-failed", "permanent",
	"not-recorded", "fenced-out", "unknown", "store-unavailable", "rejected", "error"}

func (o Outcome) String() string {
	if o < 0 || int(o) >= len(outcomeNames) {
		return "invalid"
	}
	return outcomeNames[o]
}

// Ack reports whether a push adapter acknowledges the message for this outcome.
func (o Outcome) Ack() bool {
	switch o {
	case OutcomeRan, OutcomeDuplicate, OutcomePermanent, OutcomeNotRecorded, OutcomeFencedOut:
		return true
	}
	return false
}

// OutcomeOf classifies an error returned by Lock, Mutex or Do.
func OutcomeOf(err error) Outcome {
	var be *BodyError
	switch {
	case err == nil:
		return OutcomeRan
	case errors.Is(err, ErrDuplicate):
		return OutcomeDuplicate
	case errors.Is(err, ErrInProgress):
		return OutcomeInProgress
	case errors.As(err, &be):
		if IsPermanent(be.Err) {
			return OutcomePermanent
		}
		return OutcomeBodyFailed
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
