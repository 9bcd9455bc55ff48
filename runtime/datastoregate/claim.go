package datastoregate

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// expired reports whether r is past its expires_at at now. An unknown record
// never expires. An expired record the TTL policy has not deleted yet (deletion
// can lag by about a day) counts as absent, except that its fence carries on.
func expired(r *gate.Record, now time.Time) bool {
	return r.State != gate.StateUnknown && !r.ExpiresAt.IsZero() && !now.Before(r.ExpiresAt)
}

// Claim implements gate.Backend in one read-write transaction: two RPCs (Lookup,
// then Commit when the claim is won or Rollback when it is not), more only when
// a commit aborts or its answer is lost (see the package doc). A claim whose
// token equals the stored claim_token is a retry of a claim that was applied: it
// answers Won with the stored record, fence unchanged. A fingerprint mismatch
// returns an error matching gate.ErrKeyReuse, a fence past gate.MaxFence one
// matching gate.ErrFenceExhausted; other errors mean the store did not answer.
func (s *Store) Claim(ctx context.Context, req gate.ClaimRequest) (gate.ClaimResult, error) {
	return update(ctx, s, "claim", req.Key, func(now time.Time, cur *gate.Record) (*gate.Record, gate.ClaimResult, error) {
		return claimStep(req, now, s.skew, cur)
	})
}

// expiredFor is expired with a claimed record judged at now − skew, so a
// clock up to skew ahead of the holder's cannot expire it early.
func expiredFor(r *gate.Record, now time.Time, skew time.Duration) bool {
	if r.State == gate.StateClaimed {
		now = now.Add(-skew)
	}
	return expired(r, now)
}

// claimStep is the claim rows of docs/design.md's transition table, as memgate
// applies them.
// A claimed record is judged skew earlier (see Options.MaxClockSkew).
func claimStep(req gate.ClaimRequest, now time.Time, skew time.Duration, cur *gate.Record) (*gate.Record, gate.ClaimResult, error) {
	live := cur != nil && !expiredFor(cur, now, skew)
	if live && len(req.Fingerprint) > 0 && len(cur.Fingerprint) > 0 && !bytes.Equal(req.Fingerprint, cur.Fingerprint) {
		return nil, gate.ClaimResult{Record: *cur}, fmt.Errorf("key %q: %w", req.Key, gate.ErrKeyReuse)
	}
	fence := int64(1)
	if cur != nil {
		fence = cur.Fence + 1
	}
	if live {
		switch cur.State {
		case gate.StateDone:
			return nil, gate.ClaimResult{Status: gate.AlreadyDone, Record: *cur}, nil
		case gate.StateFailed:
			return nil, gate.ClaimResult{Status: gate.Failed, Record: *cur}, nil
		case gate.StateUnknown:
			return nil, gate.ClaimResult{Status: gate.Unknown, Record: *cur}, nil
		case gate.StateClaimed:
			if req.Token != "" && cur.ClaimToken == req.Token {
				return nil, gate.ClaimResult{Status: gate.Won, Record: *cur}, nil
			}
			if now.Before(cur.LeaseExpiry.Add(skew)) {
				return nil, gate.ClaimResult{Status: gate.HeldByOther, Record: *cur}, nil
			}
		}
	}
	if fence > gate.MaxFence {
		return nil, gate.ClaimResult{}, fmt.Errorf("key %q: %w", req.Key, gate.ErrFenceExhausted)
	}
	fp := req.Fingerprint
	if len(fp) == 0 && live {
		fp = cur.Fingerprint
	}
	lease := now.Add(req.Lease)
	n := normalize(gate.Record{
		Key: req.Key, State: gate.StateClaimed, Fence: fence, LeaseExpiry: lease,
		ExpiresAt: lease.Add(req.TTL), ClaimToken: req.Token, Owner: req.Owner,
		Fingerprint: bytes.Clone(fp),
	})
	return &n, gate.ClaimResult{Status: gate.Won, Record: n}, nil
}
