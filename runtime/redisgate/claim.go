package redisgate

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// Claim statuses the claim script returns besides the gate.ClaimStatus values 1–5.
const (
	claimKeyReuse       = -1
	claimFenceExhausted = -2
)

// Claim implements gate.Backend with one script on the record's key, judged on
// the server clock. A fingerprint that differs from a live record's returns an
// error matching gate.ErrKeyReuse (with the record found); a claim that would pass
// gate.MaxFence returns one matching gate.ErrFenceExhausted. Other errors come
// from Redis or the connection and are wrapped with the key; context errors are
// returned as they are.
func (s *Store) Claim(ctx context.Context, req gate.ClaimRequest) (gate.ClaimResult, error) {
	ttl := millis(req.TTL)
	v, err := s.run(ctx, claimScript, "claim", req.Key, encodeClaim(req, ttl), strconv.FormatInt(millis(req.Lease)+ttl, 10))
	if err != nil {
		return gate.ClaimResult{}, err
	}
	switch v := v.(type) {
	case int64: // won on an absent key: the key's expiry
		r := gate.Record{Key: req.Key, State: gate.StateClaimed, Fence: 1, ClaimToken: req.Token, Owner: req.Owner,
			LeaseExpiry: time.UnixMilli(v - ttl).UTC(), ExpiresAt: time.UnixMilli(v).UTC()}
		if len(req.Fingerprint) > 0 {
			r.Fingerprint = req.Fingerprint
		}
		return gate.ClaimResult{Status: gate.Won, Record: r}, nil
	case string:
		if strings.HasPrefix(v, "won ") {
			rec, err := wonClaim(req, ttl, v)
			if err != nil {
				return gate.ClaimResult{}, s.wrap("claim", req.Key, err)
			}
			return gate.ClaimResult{Status: gate.Won, Record: rec}, nil
		}
		rec, err := decodeReply(req.Key, v)
		if err != nil {
			return gate.ClaimResult{}, s.wrap("claim", req.Key, err)
		}
		return s.judge(req, rec)
	}
	status, payload, err := reply(v)
	if err != nil {
		return gate.ClaimResult{}, s.wrap("claim", req.Key, err)
	}
	if status == claimFenceExhausted {
		return gate.ClaimResult{}, fmt.Errorf("key %s: %w", quoteKey(req.Key), gate.ErrFenceExhausted)
	}
	rec, err := decodeRecord(req.Key, payload)
	if err != nil {
		return gate.ClaimResult{}, s.wrap("claim", req.Key, err)
	}
	if status == claimKeyReuse {
		return gate.ClaimResult{Record: rec}, fmt.Errorf("key %s: %w", quoteKey(req.Key), gate.ErrKeyReuse)
	}
	st := gate.ClaimStatus(status)
	if st < gate.Won || st > gate.Unknown {
		return gate.ClaimResult{}, s.wrap("claim", req.Key, fmt.Errorf("unexpected status %d", status))
	}
	return gate.ClaimResult{Status: st, Record: rec}, nil
}

// judge answers a claim with the live record the script found and did not take
// over, in the script's order: a differing fingerprint is key reuse; then the
// state; a claim carrying the request's token is re-affirmed (Won), any other
// claim is held (the script returns a claim only when its lease runs or one of
// the first two holds).
func (s *Store) judge(req gate.ClaimRequest, rec gate.Record) (gate.ClaimResult, error) {
	if len(req.Fingerprint) > 0 && len(rec.Fingerprint) > 0 && !bytes.Equal(req.Fingerprint, rec.Fingerprint) {
		return gate.ClaimResult{Record: rec}, fmt.Errorf("key %s: %w", quoteKey(req.Key), gate.ErrKeyReuse)
	}
	switch rec.State {
	case gate.StateDone:
		return gate.ClaimResult{Status: gate.AlreadyDone, Record: rec}, nil
	case gate.StateFailed:
		return gate.ClaimResult{Status: gate.Failed, Record: rec}, nil
	case gate.StateUnknown:
		return gate.ClaimResult{Status: gate.Unknown, Record: rec}, nil
	}
	if req.Token != "" && rec.ClaimToken == req.Token {
		return gate.ClaimResult{Status: gate.Won, Record: rec}, nil
	}
	return gate.ClaimResult{Status: gate.HeldByOther, Record: rec}, nil
}

// wonClaim builds the record of a claim that took a key over from the request and
// the script's "won <fence> <expiry>[ <fingerprint>]" reply; the lease expires
// ttlMillis before the key.
func wonClaim(req gate.ClaimRequest, ttlMillis int64, reply string) (gate.Record, error) {
	parts := strings.SplitN(strings.TrimPrefix(reply, "won "), " ", 3)
	if len(parts) < 2 {
		return gate.Record{}, fmt.Errorf("claim reply %.40q: want fence and expiry", reply)
	}
	fence, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return gate.Record{}, fmt.Errorf("claim reply fence: %w", err)
	}
	exp, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return gate.Record{}, fmt.Errorf("claim reply expiry: %w", err)
	}
	r := gate.Record{Key: req.Key, State: gate.StateClaimed, Fence: fence, ClaimToken: req.Token, Owner: req.Owner,
		LeaseExpiry: time.UnixMilli(exp - ttlMillis).UTC(), ExpiresAt: time.UnixMilli(exp).UTC()}
	if len(parts) == 3 {
		r.Fingerprint = []byte(parts[2])
	}
	return r, nil
}
