package redisgate

import (
	"context"
	"fmt"

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
	v, err := s.run(ctx, claimScript, "claim", req.Key,
		req.Token, req.Owner, millis(req.Lease), millis(req.TTL), req.Fingerprint)
	if err != nil {
		return gate.ClaimResult{}, err
	}
	status, payload, err := reply(v)
	if err != nil {
		return gate.ClaimResult{}, s.wrap("claim", req.Key, err)
	}
	rec, err := decodeRecord(req.Key, payload)
	if err != nil {
		return gate.ClaimResult{}, s.wrap("claim", req.Key, err)
	}
	switch status {
	case claimKeyReuse:
		return gate.ClaimResult{Record: rec}, fmt.Errorf("key %s: %w", quoteKey(req.Key), gate.ErrKeyReuse)
	case claimFenceExhausted:
		return gate.ClaimResult{}, fmt.Errorf("key %s: %w", quoteKey(req.Key), gate.ErrFenceExhausted)
	}
	st := gate.ClaimStatus(status)
	if st < gate.Won || st > gate.Unknown {
		return gate.ClaimResult{}, s.wrap("claim", req.Key, fmt.Errorf("unexpected status %d", status))
	}
	if st == gate.Won {
		// A new claim's reply leaves out what the request already says; a
		// re-affirmed one stored the same values.
		rec.State, rec.ClaimToken, rec.Owner = gate.StateClaimed, req.Token, req.Owner
	}
	return gate.ClaimResult{Status: st, Record: rec}, nil
}
