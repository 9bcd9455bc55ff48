package gate

import (
	"context"
	"time"
)

// ClaimStatus is the answer of Backend.Claim.
type ClaimStatus int

// The answers a claim can get. See docs/design.md's transition table.
const (
	// Won: the caller now holds the key (fresh record, lapsed lease, expired done or
	// failed record, or a re-affirmed claim carrying the same claim token).
	Won ClaimStatus = iota + 1
	// HeldByOther: a live lease belongs to someone else.
	HeldByOther
	// AlreadyDone: the record is done and not yet expired.
	AlreadyDone
	// Failed: the record failed permanently and is not yet expired.
	Failed
	// Unknown: the record's outcome is unknown; claims are refused until resolved.
	Unknown
)

func (s ClaimStatus) String() string {
	switch s {
	case Won:
		return "won"
	case HeldByOther:
		return "held-by-other"
	case AlreadyDone:
		return "already-done"
	case Failed:
		return "failed"
	case Unknown:
		return "unknown"
	}
	return "invalid"
}

// ClaimRequest is the input of Backend.Claim.
type ClaimRequest struct {
	// Key is the namespaced idempotency key; never empty.
	Key string
	// Token is a random value unique to this claim call. A backend that finds a
	// claimed record carrying the same token treats the call as a retry of a claim
	// whose commit was applied but whose answer was lost: it answers Won with the
	// stored fence, unchanged.
	Token string
	// Owner names the caller (instance, pid, or caller-given).
	Owner string
	// Lease is how long a won claim excludes others. Zero gives an already-lapsed
	// claim (lease_expiry = now), never "no lease".
	Lease time.Duration
	// TTL is how long a record is kept past its lease or completion:
	// expires_at = lease_expiry + TTL for a claim.
	TTL time.Duration
	// Fingerprint, when non-empty, is compared with a stored fingerprint: a
	// difference is ErrKeyReuse. A won claim stores it.
	Fingerprint []byte
}

// ClaimResult is the output of Backend.Claim.
type ClaimResult struct {
	Status ClaimStatus
	// Record is the record after the claim (for Won) or as found (otherwise).
	Record Record
}

// Completion is the input of Backend.Complete and Backend.Fail.
type Completion struct {
	Key   string
	Fence int64
	// TTL sets expires_at = done_at + TTL.
	TTL time.Duration
	// Result is stored with the record; nil stores none.
	Result []byte
}

// Backend is the store port every backend implements: every method the Gate and
// the distributed lock (runtime/dlock) call. All methods may be called
// concurrently. Backends do not retry on their own: the Gate decides. It retries
// Complete and MarkUnknown within their store phase, which a repeat at the same
// fence makes safe (it answers false), and then reads the record with Inspect to
// tell its own earlier commit (the record done or unknown at its fence) from a
// newer holder's; gatetest's "RepeatedFinishShowsItsFence" pins that. Times are
// taken from the store's clock where it has one. Errors other than ErrKeyReuse
// and ErrFenceExhausted mean the store could not answer; the Gate then fails
// closed. Operators' verbs the Gate never calls are in Admin.
type Backend interface {
	// Claim atomically applies the claim row of the transition table. A
	// fingerprint mismatch returns an error matching ErrKeyReuse; a claim that would
	// move the fence past MaxFence returns one matching ErrFenceExhausted.
	Claim(ctx context.Context, req ClaimRequest) (ClaimResult, error)
	// Complete moves a claimed record whose fence equals c.Fence to done, with no
	// lease guard (ownership is the fence, not the clock). It reports false when
	// the fence is stale or the record is not claimed.
	Complete(ctx context.Context, c Completion) (bool, error)
	// Release makes a claimed record whose fence equals fence claimable at once:
	// lease_expiry = now and fence+1. It reports false when the fence is stale.
	Release(ctx context.Context, key string, fence int64) (bool, error)
	// Renew sets lease_expiry = now + lease (and expires_at to at least
	// lease_expiry + ttl) on a claimed record whose fence equals fence, leaving the
	// fence unchanged; the Gate's heartbeat and the lock's renewals call it. It
	// reports false when the fence is stale or the record is not claimed. A lapsed
	// but un-reclaimed lease is renewed.
	Renew(ctx context.Context, key string, fence int64, lease, ttl time.Duration) (bool, error)
	// Fail moves a claimed record whose fence equals c.Fence to failed with
	// expires_at = now + c.TTL and c.Result stored (a body error marked
	// Permanent). It reports false when stale.
	Fail(ctx context.Context, c Completion) (bool, error)
	// MarkUnknown moves a claimed record whose fence equals fence to unknown, with
	// no expires_at (the done record could not be written after the body ran).
	// It reports false when stale.
	MarkUnknown(ctx context.Context, key string, fence int64) (bool, error)
	// AdvanceFence sets the fence to max(fence, atLeast) and returns the fence now
	// stored; it never lowers it. It raises a key's fence after a store lost data,
	// so the next token is above every token handed out before the loss. An absent
	// key gets a lapsed claimed record with that fence and expires_at = now + ttl.
	// atLeast past MaxFence is ErrFenceExhausted.
	AdvanceFence(ctx context.Context, key string, atLeast int64, ttl time.Duration) (int64, error)
	// Inspect returns the record and true, or false when it is absent or expired
	// (past expires_at), judged on the store's clock. It changes nothing.
	Inspect(ctx context.Context, key string) (Record, bool, error)
}

// Admin is a Backend with the operator's verbs, which the Gate never calls.
// Every shipped backend is one; a backend that is not still runs every verb,
// and only the oncegate CLI's unresolved, resolve and purge commands refuse it
// (gatetest skips their tests).
type Admin interface {
	Backend
	// ListUnresolved returns up to limit unknown records, oldest first (by their
	// last lease expiry). limit ≤ 0 means no limit.
	ListUnresolved(ctx context.Context, limit int) ([]Record, error)
	// Resolve moves an unknown record to done (asDone, with expires_at = now + ttl)
	// or to a lapsed claim with fence+1 (retry), so the next delivery runs the work
	// again. It returns ErrNotFound when the key is absent and ErrNotUnknown when
	// its state is not unknown.
	Resolve(ctx context.Context, key string, asDone bool, ttl time.Duration) error
	// Purge deletes up to limit records whose expires_at has passed on the store's
	// clock, for stores without a TTL policy (one that deletes records itself may
	// delete nothing and return 0); it never deletes a live claim or an unknown
	// record, and correctness never depends on it. It returns how many it
	// deleted. limit ≤ 0 means no limit.
	Purge(ctx context.Context, limit int) (int, error)
}
