package sqlgate

import (
	"bytes"
	"database/sql"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/oncegate/oncegate/runtime/gate"
)

const (
	// maxFence is gate.MaxFence, spliced into statements.
	maxFence = gate.MaxFence
	// keyLimit is the longest stored key in bytes (the key column holds 512
	// bytes); longer or binary keys are stored hashed (gate.StoreKey).
	keyLimit = 512
	// tokenLimit is the longest stored claim token in bytes; longer or binary
	// tokens are stored hashed, which keeps equality.
	tokenLimit = 128
	// ownerLimit is the longest stored owner in bytes; it is informational, so a
	// longer one is cut at a rune boundary.
	ownerLimit = 1024
)

// cols lists the record columns in the order scanRow reads them.
const cols = `{K}, raw_key, state, fence, lease_expiry, done_at, expires_at, claim_token, owner, fingerprint, result`

// row is one stored record as read from the table.
type row struct {
	key         string // stored form
	rawKey      []byte
	state       gate.State
	fence       int64
	leaseExpiry int64
	doneAt      sql.NullInt64
	expiresAt   sql.NullInt64
	claimToken  string
	owner       string
	fingerprint []byte
	result      []byte
}

// dest returns the scan destinations for cols, followed by extra.
func (r *row) dest(extra ...any) []any {
	return append([]any{&r.key, &r.rawKey, (*stateScanner)(&r.state), &r.fence, &r.leaseExpiry,
		&r.doneAt, &r.expiresAt, &r.claimToken, &r.owner, &r.fingerprint, &r.result}, extra...)
}

// stateScanner scans a state column of any string-like type.
type stateScanner gate.State

func (s *stateScanner) Scan(v any) error {
	switch x := v.(type) {
	case string:
		*s = stateScanner(x)
	case []byte:
		*s = stateScanner(x)
	default:
		return fmt.Errorf("state column holds %T", v)
	}
	return nil
}

// expired is memgate's expired: past expires_at, never for unknown.
func (r *row) expired(now int64) bool {
	return r.state != gate.StateUnknown && r.expiresAt.Valid && now >= r.expiresAt.Int64
}

// record converts r to a gate.Record reporting key as its key.
func (r *row) record(key string) gate.Record {
	return gate.Record{
		Key:         key,
		State:       r.state,
		Fence:       r.fence,
		LeaseExpiry: msTime(r.leaseExpiry),
		ExpiresAt:   nullTime(r.expiresAt),
		DoneAt:      nullTime(r.doneAt),
		ClaimToken:  r.claimToken,
		Owner:       r.owner,
		Fingerprint: r.fingerprint,
		Result:      r.result,
	}
}

// callerKey is the key as the caller gave it, when the table knows it.
func (r *row) callerKey() string {
	if r.rawKey != nil {
		return string(r.rawKey)
	}
	return r.key
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func nullTime(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return msTime(n.Int64)
}

// millis converts d to whole milliseconds, rounding a positive remainder up so a
// lease or TTL is never shortened.
func millis(d time.Duration) int64 {
	ms := d.Milliseconds()
	if d > 0 && d%time.Millisecond != 0 {
		ms++
	}
	return ms
}

// storedKey returns the form of key the key column holds and, when that is a
// hash, the caller's key for raw_key (nil otherwise).
func storedKey(key string) (string, []byte) {
	sk := gate.StoreKey(key, keyLimit)
	if sk == key {
		return sk, nil
	}
	return sk, []byte(key)
}

// storedToken returns the form of a claim token the claim_token column holds.
func storedToken(token string) string { return gate.StoreKey(token, tokenLimit) }

// storedOwner returns owner as valid UTF-8 without NUL bytes, cut to ownerLimit.
func storedOwner(owner string) string {
	o := strings.ReplaceAll(strings.ToValidUTF8(owner, "\uFFFD"), "\x00", "")
	if len(o) <= ownerLimit {
		return o
	}
	cut := ownerLimit
	for cut > 0 && !utf8.RuneStart(o[cut]) {
		cut--
	}
	return o[:cut]
}

// nullBytes returns b, or nil (SQL NULL) when it is empty.
func nullBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// claimArgs is a claim request in stored form.
type claimArgs struct {
	req     gate.ClaimRequest
	key     string // stored form
	rawKey  []byte
	token   string
	owner   string
	leaseMs int64
	ttlMs   int64
	fp      []byte // nil when none
}

func newClaimArgs(req gate.ClaimRequest) claimArgs {
	sk, raw := storedKey(req.Key)
	a := claimArgs{req: req, key: sk, rawKey: raw, token: storedToken(req.Token),
		owner: storedOwner(req.Owner), leaseMs: millis(req.Lease), ttlMs: millis(req.TTL)}
	if len(req.Fingerprint) > 0 {
		a.fp = req.Fingerprint
	}
	return a
}

// won returns the record a won claim reports: the stored row, with the caller's
// key, token and owner.
func (a claimArgs) won(r *row) gate.ClaimResult {
	rec := r.record(a.req.Key)
	rec.ClaimToken, rec.Owner = a.req.Token, a.req.Owner
	return gate.ClaimResult{Status: gate.Won, Record: rec}
}

// decide applies memgate's claim rules to the stored row r (nil when absent) at
// the server time now (epoch ms). When the claim wins by a reclaim or a fresh
// record, it returns write = true and the row to store; otherwise the answer.
func decide(r *row, now int64, a claimArgs) (res gate.ClaimResult, next *row, err error) {
	live := r != nil && !r.expired(now)
	if live && a.fp != nil && r.fingerprint != nil && !bytes.Equal(a.fp, r.fingerprint) {
		return gate.ClaimResult{Record: r.record(a.req.Key)},
			nil, fmt.Errorf("sqlgate: claim %s: %w", keyq(a.req.Key), gate.ErrKeyReuse)
	}
	fence := int64(1)
	if r != nil {
		fence = r.fence + 1
	}
	if live {
		found := r.record(a.req.Key)
		switch r.state {
		case gate.StateDone:
			return gate.ClaimResult{Status: gate.AlreadyDone, Record: found}, nil, nil
		case gate.StateFailed:
			return gate.ClaimResult{Status: gate.Failed, Record: found}, nil, nil
		case gate.StateUnknown:
			return gate.ClaimResult{Status: gate.Unknown, Record: found}, nil, nil
		case gate.StateClaimed:
			if a.token != "" && r.claimToken == a.token {
				return a.won(r), nil, nil
			}
			if now < r.leaseExpiry {
				return gate.ClaimResult{Status: gate.HeldByOther, Record: found}, nil, nil
			}
		default:
			return gate.ClaimResult{}, nil, fmt.Errorf("sqlgate: claim %s: stored state %q is not a gate.State", keyq(a.req.Key), r.state)
		}
	}
	if fence > maxFence {
		return gate.ClaimResult{}, nil, fmt.Errorf("sqlgate: claim %s: %w", keyq(a.req.Key), gate.ErrFenceExhausted)
	}
	fp := a.fp
	if fp == nil && live {
		fp = r.fingerprint
	}
	n := &row{
		key: a.key, rawKey: a.rawKey, state: gate.StateClaimed, fence: fence,
		leaseExpiry: now + a.leaseMs, expiresAt: sql.NullInt64{Int64: now + a.leaseMs + a.ttlMs, Valid: true},
		claimToken: a.token, owner: a.owner, fingerprint: fp,
	}
	return a.won(n), n, nil
}
