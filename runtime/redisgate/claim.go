package redisgate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/runtime/gate"
)

// Claim statuses the claim script returns besides the gate.ClaimStatus values 1–5.
const (
	claimKeyReuse       = -1
	claimFenceExhausted = -2
)

// Claim implements gate.Backend, judged on the server clock. It first sends one
// transaction of plain commands (claimPlain), which answers every claim but the
// takeover of a lapsed claim and a record in the old format; those run the claim
// script, which judges again. A fingerprint that differs from a live record's returns an
// error matching gate.ErrKeyReuse (with the record found); a claim that would pass
// gate.MaxFence returns one matching gate.ErrFenceExhausted. Other errors come
// from Redis or the connection and are wrapped with the key; context errors are
// returned as they are.
func (s *Store) Claim(ctx context.Context, req gate.ClaimRequest) (gate.ClaimResult, error) {
	ttl := millis(req.TTL)
	value, px := encodeClaim(req, ttl), millis(req.Lease)+ttl
	if px > 0 {
		if res, err, final := s.claimPlain(ctx, req, value, px, ttl); final {
			return res, err
		}
	}
	v, err := s.run(ctx, claimScript, "claim", req.Key, value, strconv.FormatInt(px, 10))
	if err != nil {
		return gate.ClaimResult{}, err
	}
	switch v := v.(type) {
	case int64: // won on an absent key: the key's expiry
		return gate.ClaimResult{Status: gate.Won, Record: wonFresh(req, ttl, v)}, nil
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

// claimPlain makes the claim with plain commands in one round trip and one
// atomic transaction: MULTI, SET key value NX GET PX px (which writes the fence 1
// record on an absent key and otherwise returns the value it found, writing
// nothing), PEXPIRETIME and PTTL (the key's expiry and the time left until it,
// which give the server's clock), EXEC. It costs the server a fraction of a
// script: no Lua state, no argument tables, no redis.call conversions. It is
// final (final true) for a win on an absent key and for every record it can
// judge by itself: done, failed or unknown, a live claim, and a lapsed claim
// that is the request's own or has another fingerprint. A lapsed claim to take
// over, or a key holding the old hash format (WRONGTYPE), is not final: the
// caller runs the claim script, which takes over atomically or reads the hash.
func (s *Store) claimPlain(ctx context.Context, req gate.ClaimRequest, value string, px, ttlMillis int64) (res gate.ClaimResult, err error, final bool) {
	k := s.RedisKey(req.Key)
	var set *redis.StringCmd
	var expiry, pttl *redis.Cmd
	_, err = s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		set = redis.NewStringCmd(ctx, "set", k, value, "nx", "get", "px", px)
		_ = p.Process(ctx, set)
		expiry = p.Do(ctx, "pexpiretime", k)
		pttl = p.Do(ctx, "pttl", k)
		return nil
	})
	old, serr := set.Result()
	switch {
	case serr != nil && strings.HasPrefix(serr.Error(), "WRONGTYPE"):
		return gate.ClaimResult{}, nil, false // a hash: the old format
	case serr != nil && !errors.Is(serr, redis.Nil):
		// The SET's own error (a full server's OOM, refused as it is queued),
		// not the EXECABORT that follows it.
		return gate.ClaimResult{}, s.wrap("claim", req.Key, serr), true
	case err != nil && !errors.Is(err, redis.Nil):
		return gate.ClaimResult{}, s.wrap("claim", req.Key, err), true
	}
	exp, err1 := expiry.Int64()
	left, err2 := pttl.Int64()
	if err := errors.Join(err1, err2); err != nil {
		return gate.ClaimResult{}, s.wrap("claim", req.Key, err), true
	}
	if errors.Is(serr, redis.Nil) { // written: won at fence 1
		return gate.ClaimResult{Status: gate.Won, Record: wonFresh(req, ttlMillis, exp)}, nil, true
	}
	rec, err := decodeValue(req.Key, old, exp)
	if err != nil {
		return gate.ClaimResult{}, s.wrap("claim", req.Key, err), true
	}
	if rec.State == gate.StateClaimed {
		// server now < lease_expiry; a claim without a TTL (PERSIST from outside,
		// doc.go "Expiry") is lapsed, as the script judges it.
		live := exp >= 0 && !rec.LeaseExpiry.IsZero() && exp-left < rec.LeaseExpiry.UnixMilli()
		own := req.Token != "" && rec.ClaimToken == req.Token
		reuse := len(req.Fingerprint) > 0 && len(rec.Fingerprint) > 0 && !bytes.Equal(req.Fingerprint, rec.Fingerprint)
		if !live && !own && !reuse {
			return gate.ClaimResult{}, nil, false // lapsed: the script takes it over
		}
	}
	res, err = s.judge(req, rec)
	return res, err, true
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

// wonFresh builds the record of a claim won on an absent key at fence 1, whose
// key expires at expiry (epoch ms) and whose lease ttlMillis before it.
func wonFresh(req gate.ClaimRequest, ttlMillis, expiry int64) gate.Record {
	r := gate.Record{Key: req.Key, State: gate.StateClaimed, Fence: 1, ClaimToken: req.Token, Owner: req.Owner,
		LeaseExpiry: time.UnixMilli(expiry - ttlMillis).UTC(), ExpiresAt: time.UnixMilli(expiry).UTC()}
	if len(req.Fingerprint) > 0 {
		r.Fingerprint = req.Fingerprint
	}
	return r
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
