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
	CallClaimRefused = "claim_refused" // a claim answered other than Won (also counted as claim)
)

// Backend wraps a gate.Backend and counts its port calls in Calls, one per
// call whatever its answer. It is a gate.Renewer, gate.TerminalFailer and
// gate.UnknownMarker exactly when the wrapped backend is one: New returns a
// wrapper with only the abilities the inner backend has, so a Gate over it
// behaves as over the inner one.
type Backend struct {
	Inner gate.Backend
	Calls *Counter
}

var _ gate.Backend = (*Backend)(nil)

// Claim implements gate.Backend.
func (b *Backend) Claim(ctx context.Context, req gate.ClaimRequest) (gate.ClaimResult, error) {
	add(ctx, b.Calls, CallClaim)
	res, err := b.Inner.Claim(ctx, req)
	if err == nil && res.Status != gate.Won {
		add(ctx, b.Calls, CallClaimRefused)
	}
	return res, err
}

// Complete implements gate.Backend.
func (b *Backend) Complete(ctx context.Context, c gate.Completion) (bool, error) {
	add(ctx, b.Calls, CallComplete)
	return b.Inner.Complete(ctx, c)
}

// Release implements gate.Backend.
func (b *Backend) Release(ctx context.Context, key string, fence int64) (bool, error) {
	add(ctx, b.Calls, CallRelease)
	return b.Inner.Release(ctx, key, fence)
}

type renewer struct{ *Backend }

func (b renewer) Renew(ctx context.Context, key string, fence int64, lease, ttl time.Duration) (bool, error) {
	add(ctx, b.Calls, CallRenew)
	return b.Inner.(gate.Renewer).Renew(ctx, key, fence, lease, ttl)
}

type failer struct{ *Backend }

func (b failer) Fail(ctx context.Context, c gate.Completion) (bool, error) {
	add(ctx, b.Calls, CallFail)
	return b.Inner.(gate.TerminalFailer).Fail(ctx, c)
}

type marker struct{ *Backend }

func (b marker) MarkUnknown(ctx context.Context, key string, fence int64) (bool, error) {
	add(ctx, b.Calls, CallMarkUnknown)
	return b.Inner.(gate.UnknownMarker).MarkUnknown(ctx, key, fence)
}

// CountBackend returns inner wrapped so that every port call adds one to calls
// under its Call* name. The result has the gate.Renewer, gate.TerminalFailer and
// gate.UnknownMarker abilities inner has, and no others (the admin capabilities
// are not on the request path and are not forwarded).
func CountBackend(inner gate.Backend, calls *Counter) gate.Backend {
	b := &Backend{Inner: inner, Calls: calls}
	_, r := inner.(gate.Renewer)
	_, f := inner.(gate.TerminalFailer)
	_, m := inner.(gate.UnknownMarker)
	switch {
	case r && f && m:
		return struct {
			*Backend
			renewer
			failer
			marker
		}{b, renewer{b}, failer{b}, marker{b}}
	case r && f:
		return struct {
			*Backend
			renewer
			failer
		}{b, renewer{b}, failer{b}}
	case r && m:
		return struct {
			*Backend
			renewer
			marker
		}{b, renewer{b}, marker{b}}
	case f && m:
		return struct {
			*Backend
			failer
			marker
		}{b, failer{b}, marker{b}}
	case r:
		return struct {
			*Backend
			renewer
		}{b, renewer{b}}
	case f:
		return struct {
			*Backend
			failer
		}{b, failer{b}}
	case m:
		return struct {
			*Backend
			marker
		}{b, marker{b}}
	}
	return b
}

// PortCalls lists the Call* names that are calls on the port (CallClaimRefused
// is a kind of CallClaim, not another call).
var PortCalls = []string{CallClaim, CallComplete, CallRelease, CallRenew, CallFail, CallMarkUnknown}
