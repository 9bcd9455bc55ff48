package datastoregate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/datastore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/oncegate/oncegate/runtime/gate"
)

// expired reports whether r is past its expires_at at now. An unknown record
// never expires. An expired record the TTL policy has not deleted yet (deletion
// can lag by about a day) counts as absent, except that its fence carries on.
func expired(r *gate.Record, now time.Time) bool {
	return r.State != gate.StateUnknown && !r.ExpiresAt.IsZero() && !now.Before(r.ExpiresAt)
}

// Claim implements gate.Backend. A refused claim (done, failed, unknown, held
// by another) is one RPC, a lookup; a claim of an absent key two, the lookup and
// a non-transactional insert (see claimFast); a claim that lost the race to
// create the record three, the insert refused and the record looked up again. A
// claim that takes over an expired record or a lapsed lease then runs one
// read-write transaction: two RPCs more (Lookup, then Commit when
// the claim is won or Rollback when it is not), more still when a commit aborts
// or its answer is lost (see the package doc). A claim whose
// token equals the stored claim_token is a retry of a claim that was applied: it
// answers Won with the stored record, fence unchanged. A fingerprint mismatch
// returns an error matching gate.ErrKeyReuse, a fence past gate.MaxFence one
// matching gate.ErrFenceExhausted; other errors mean the store did not answer.
func (s *Store) Claim(ctx context.Context, req gate.ClaimRequest) (gate.ClaimResult, error) {
	if res, ok, err := s.claimFast(ctx, req); ok || err != nil {
		return res, err
	}
	return update(ctx, s, "claim", req.Key, func(now time.Time, cur *gate.Record) (*gate.Record, gate.ClaimResult, error) {
		return claimStep(req, now, s.skew, cur)
	})
}

// claimFast answers a claim without a transaction where that is sound, and
// reports ok = false when the transactional claim must decide. It looks the
// record up outside a transaction: a lookup by key is strongly consistent
// (Datastore API, ReadOptions: lookups default to strong consistency), so it
// returns the record as of some instant within the call. When claimStep at that
// record writes nothing (done, failed, unknown, held by another, the caller's
// own claim re-affirmed by token, key reuse), that is the answer: a claim at
// that instant would have given it, since leases and expiries only lapse and
// the clock is read after the lookup. When the record is absent, a
// non-transactional insert mutation writes the fresh claim: it applies only if
// the entity still does not exist (codes.AlreadyExists otherwise), so it cannot
// overwrite a concurrent claim. Either way a refused claim is one RPC and a fresh
// one two, as in the transaction (Lookup, Commit). An insert refused because the
// record exists (another claim created it since, or this insert applied and the
// client library's retry of it was refused) looks the record up once more and
// judges it the same way: a loser of the race to create it is three RPCs, and
// an insert of the caller's own is found with its token and re-affirmed. A
// record that is claimable (expired, or a lapsed lease), an insert that failed
// otherwise (its outcome unknown), and a failed lookup go to the transactional
// claim, which reads the record again and re-affirms an insert that applied
// unseen by its token.
func (s *Store) claimFast(ctx context.Context, req gate.ClaimRequest) (gate.ClaimResult, bool, error) {
	dk := s.dsKey(req.Key)
	for pass := 1; ; pass++ {
		var e entity
		err := s.c.Get(ctx, dk, &e)
		var cur *gate.Record
		switch {
		case err == nil:
			cur = &e.rec
		case errors.Is(err, datastore.ErrNoSuchEntity):
		default:
			if ctx.Err() != nil {
				return gate.ClaimResult{}, false, ctx.Err()
			}
			return gate.ClaimResult{}, false, nil
		}
		write, out, err := claimStep(req, s.clock(), s.skew, cur)
		if err != nil || write == nil {
			return out, true, err
		}
		if cur != nil || pass > 1 {
			return gate.ClaimResult{}, false, nil
		}
		rec := normalize(*write)
		if err := checkSize(rec); err != nil {
			return gate.ClaimResult{}, false, err
		}
		_, err = s.c.Mutate(ctx, datastore.NewInsert(dk, &entity{rec: rec}))
		switch {
		case err == nil:
			return out, true, nil
		case ctx.Err() != nil:
			return gate.ClaimResult{}, false, ctx.Err()
		case status.Code(err) != codes.AlreadyExists:
			return gate.ClaimResult{}, false, nil
		}
		// Another claim created the record since the lookup (or this insert
		// applied and its retry was refused): look again.
	}
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
