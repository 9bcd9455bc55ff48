package gate

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers branch on them with errors.Is, never on messages.
var (
	// ErrDuplicate: Lock found the key done (the work already ran). Returned by
	// Lock, wrapped in a *RecordError.
	ErrDuplicate = errors.New("oncegate: duplicate")
	// ErrInProgress: a live lease belongs to another holder, or a Mutex found the
	// key done. Returned by Lock and Mutex, wrapped in a *RecordError.
	ErrInProgress = errors.New("oncegate: in progress")
	// ErrFailed: the key's work failed permanently earlier (state failed), or the
	// body just returned a Permanent error that was recorded. Returned by Lock.
	ErrFailed = errors.New("oncegate: failed permanently")
	// ErrUnknownOutcome: the key's record is unknown and must be reconciled before
	// it runs again. Returned by Lock and Mutex, wrapped in a *RecordError.
	ErrUnknownOutcome = errors.New("oncegate: outcome unknown, reconcile key")
	// ErrKeyReuse: the key was claimed with a different payload fingerprint.
	// Returned by Backend.Claim and the verbs.
	ErrKeyReuse = errors.New("oncegate: key reused with a different payload")
	// ErrFenceExhausted: the fence would pass MaxFence. Returned by Backend.Claim,
	// Backend.AdvanceFence and the verbs.
	ErrFenceExhausted = errors.New("oncegate: fencing token exhausted")
	// ErrStoreUnavailable: the claim could not be made because the store did not
	// answer; the body did not run. Returned by Lock and Mutex, wrapping the
	// backend's error.
	ErrStoreUnavailable = errors.New("oncegate: store unavailable")
	// ErrNotRecorded: the body ran but its done record could not be written; the
	// record was marked unknown where the backend allows. Adapters ack (never
	// repeat a send). Returned by Lock.
	ErrNotRecorded = errors.New("oncegate: ran but not recorded")
	// ErrFencedOut: the body ran but another holder reclaimed the key meanwhile,
	// so its completion was refused. Alertable; adapters ack. Returned by Lock and
	// Mutex.
	ErrFencedOut = errors.New("oncegate: fenced out by a newer holder")
	// ErrLeaseLost is the cause of the body's context cancellation when the
	// heartbeat's renewal was refused or could not reach the store for a whole
	// lease. Read it with context.Cause.
	ErrLeaseLost = errors.New("oncegate: lease lost")
	// ErrInvalidKey: the key is empty. Returned by the verbs before any claim.
	ErrInvalidKey = errors.New("oncegate: invalid key")
	// ErrNotFound: the key has no record. Returned by Admin.Resolve and the
	// inspection helpers.
	ErrNotFound = errors.New("oncegate: no record")
	// ErrNotUnknown: Admin.Resolve was asked to resolve a record that is not
	// unknown.
	ErrNotUnknown = errors.New("oncegate: record is not unknown")
)

// RecordError carries the record behind a verb's answer. It unwraps to the
// sentinel (ErrDuplicate, ErrInProgress, ErrUnknownOutcome, ErrFailed,
// ErrFencedOut).
type RecordError struct {
	Err    error
	Record Record
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("%v: key %q (state %s, fence %d, lease expiry %s, owner %q)",
		e.Err, e.Record.Key, e.Record.State, e.Record.Fence,
		e.Record.LeaseExpiry.UTC().Format("2006-01-02T15:04:05.000Z"), e.Record.Owner)
}

func (e *RecordError) Unwrap() error { return e.Err }

// BodyError wraps an error the guarded body returned. The claim was released (or
// recorded failed, for a Permanent error). Adapters nack it unless it is
// permanent.
type BodyError struct {
	Key   string
	Fence int64
	Err   error
}

func (e *BodyError) Error() string {
	return fmt.Sprintf("oncegate: body for key %q (fence %d): %v", e.Key, e.Fence, e.Err)
}

func (e *BodyError) Unwrap() error { return e.Err }

type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent marks a body error as terminal: Lock records the key failed and
// later deliveries answer ErrFailed without running. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}
