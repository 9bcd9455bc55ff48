package dlock

import "errors"

// Sentinel errors. Callers branch on them with errors.Is, never on messages. The
// package also returns the gate sentinels gate.ErrInvalidKey (empty key),
// gate.ErrFenceExhausted (a token would pass gate.MaxFence), gate.ErrLeaseLost
// (a renewal was refused) and gate.ErrFencedOut (another holder took the key
// while a scope's function ran).
var (
	// ErrLocked: the key is held by a live lease. Returned by Acquire and Do,
	// wrapped in a *gate.RecordError whose Record names the holder (Owner) and
	// its lease expiry.
	ErrLocked = errors.New("oncegate: lock held")
	// ErrNotLock: the key's record is done, failed or unknown, which no lock
	// leaves behind: something other than this package wrote it (a Gate sharing
	// the namespace). Returned by Acquire, AcquireWait and Do, wrapped in a
	// *gate.RecordError.
	ErrNotLock = errors.New("oncegate: key holds a record that is not a lock")
)
