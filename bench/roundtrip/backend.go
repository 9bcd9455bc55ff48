package roundtrip

import (
	"context"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// Names of the port calls Backend counts.
const (
	CallClaim        = "claim"
	CallComplete     = "complete"
	CallRelease      = "release"
	CallRenew        = "renew"
	CallFail         = "fail"
	CallMarkUnknown  = "mark_unknown"
	CallInspect      = "inspect"       // only after a retried complete or unknown mark answered false
	CallClaimRefused = "claim_refused" // a claim answered other than Won (also counted as claim)
)

// Backend wraps a gate.Backend and counts its port calls in Calls, one per
// call whatever its answer. AdvanceFence, which no request makes, is forwarded
// uncounted. It is not a gate.Admin: the operator's verbs are not on the request
// path.
type Backend struct {
	gate.Backend // the wrapped backend
	Calls        *Counter
}

// Claim implements gate.Backend.
func (b *Backend) Claim(ctx context.Context, req gate.ClaimRequest) (gate.ClaimResult, error) {
	add(ctx, b.Calls, CallClaim)
	res, err := b.Backend.Claim(ctx, req)
	if err == nil && res.Status != gate.Won {
		add(ctx, b.Calls, CallClaimRefused)
	}
	return res, err
}

// Complete implements gate.Backend.
func (b *Backend) Complete(ctx context.Context, c gate.Completion) (bool, error) {
	add(ctx, b.Calls, CallComplete)
	return b.Backend.Complete(ctx, c)
}

// Release implements gate.Backend.
func (b *Backend) Release(ctx context.Context, key string, fence int64) (bool, error) {
	add(ctx, b.Calls, CallRelease)
	return b.Backend.Release(ctx, key, fence)
}

// Renew implements gate.Backend.
func (b *Backend) Renew(ctx context.Context, key string, fence int64, lease, ttl time.Duration) (bool, error) {
	add(ctx, b.Calls, CallRenew)
	return b.Backend.Renew(ctx, key, fence, lease, ttl)
}

// Fail implements gate.Backend.
func (b *Backend) Fail(ctx context.Context, c gate.Completion) (bool, error) {
	add(ctx, b.Calls, CallFail)
	return b.Backend.Fail(ctx, c)
}

// MarkUnknown implements gate.Backend.
func (b *Backend) MarkUnknown(ctx context.Context, key string, fence int64) (bool, error) {
	add(ctx, b.Calls, CallMarkUnknown)
	return b.Backend.MarkUnknown(ctx, key, fence)
}

// Inspect implements gate.Backend.
func (b *Backend) Inspect(ctx context.Context, key string) (gate.Record, bool, error) {
	add(ctx, b.Calls, CallInspect)
	return b.Backend.Inspect(ctx, key)
}

// CountBackend returns inner wrapped so that every port call a request makes
// adds one to calls under its Call* name.
func CountBackend(inner gate.Backend, calls *Counter) gate.Backend {
	return &Backend{Backend: inner, Calls: calls}
}

// PortCalls lists the Call* names that are calls on the port (CallClaimRefused
// is a kind of CallClaim, not another call).
var PortCalls = []string{CallClaim, CallComplete, CallRelease, CallRenew, CallFail, CallMarkUnknown, CallInspect}
