package redisgate

import (
	"context"
	"fmt"
	"strconv"
	"strings"

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
	if won, ok := v.(string); ok {
		rec, err := newClaim(req, won)
		if err != nil {
			return gate.ClaimResult{}, s.wrap("claim", req.Key, err)
		}
		return gate.ClaimResult{Status: gate.Won, Record: rec}, nil
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
	return gate.ClaimResult{Status: st, Record: rec}, nil
}

// newClaim builds the record of a new claim from the request and the script's
// "<fence> <lease_expiry> <expires_at>[ <fingerprint>]" reply.
func newClaim(req gate.ClaimRequest, reply string) (gate.Record, error) {
	parts := strings.SplitN(reply, " ", 4)
	if len(parts) < 3 {
		return gate.Record{}, fmt.Errorf("claim reply %q: want fence, lease expiry and expiry", reply)
	}
	fence, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return gate.Record{}, fmt.Errorf("claim reply fence: %w", err)
	}
	r := gate.Record{Key: req.Key, State: gate.StateClaimed, Fence: fence, ClaimToken: req.Token, Owner: req.Owner}
	if r.LeaseExpiry, err = parseMillis(parts[1]); err != nil {
		return gate.Record{}, fmt.Errorf("claim reply lease expiry: %w", err)
	}
	if r.ExpiresAt, err = parseMillis(parts[2]); err != nil {
		return gate.Record{}, fmt.Errorf("claim reply expiry: %w", err)
	}
	if len(parts) == 4 {
		r.Fingerprint = []byte(parts[3])
	}
	return r, nil
}
