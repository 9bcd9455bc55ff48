package gate

import "time"

// State is the stored state of a record. See docs/design.md, "The record and its state
// machine".
type State string

// The states a record can be in.
const (
	// StateClaimed: a holder claimed the key; it excludes others until LeaseExpiry.
	StateClaimed State = "claimed"
	// StateDone: the work ran and was recorded; claims answer AlreadyDone until
	// ExpiresAt.
	StateDone State = "done"
	// StateFailed: the work failed permanently (opt-in); claims answer Failed until
	// ExpiresAt.
	StateFailed State = "failed"
	// StateUnknown: the work may have run but its outcome was not recorded; claims
	// are refused until an operator resolves the key. Never expires.
	StateUnknown State = "unknown"
)

// MaxFence is the largest fencing token a backend hands out: 2^53−1, the largest
// integer that JSON numbers and JavaScript represent exactly. A claim that would go
// past it fails with ErrFenceExhausted instead of wrapping.
const MaxFence int64 = 1<<53 - 1

// Record is one stored idempotency record. Times are in the store's clock, UTC.
type Record struct {
	// Key is the key as the caller gave it to the backend (already namespaced by the
	// Gate). A backend may store a hashed form (see StoreKey) but reports this one
	// when it knows it.
	Key string
	// State is the record's state.
	State State
	// Fence is the fencing token: 1 on a fresh record, +1 on each reclaim and release.
	Fence int64
	// LeaseExpiry is until when a claimed record excludes other claims.
	LeaseExpiry time.Time
	// ExpiresAt is when the record may be physically deleted (the TTL policy field).
	// It is the zero time for an unknown record, which is never deleted.
	ExpiresAt time.Time
	// DoneAt is when the record became done or failed; zero otherwise.
	DoneAt time.Time
	// ClaimToken is the random token of the claim call that last won the record.
	ClaimToken string
	// Owner is who holds or last held the record.
	Owner string
	// Fingerprint is an optional payload hash given at claim time.
	Fingerprint []byte
	// Result is the optional stored result of a done or failed record.
	Result []byte
}

// LeaseLive reports whether a claimed record still excludes others at now.
func (r Record) LeaseLive(now time.Time) bool {
	return r.State == StateClaimed && now.Before(r.LeaseExpiry)
}
