package sqlgate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/oncegate/oncegate/runtime/gate"
)

// Claim implements gate.Backend with memgate's rules, judged on the database
// server's clock. On PostgreSQL it is one statement, won or refused: the upsert
// and, when it refuses, a read of the record that tells the caller why (held by
// another, done, failed, unknown, its own claim re-affirmed by token, key reuse
// or fence exhaustion; see claimOrReadPostgres). Only a claim that raced a
// concurrent one on the same key, and lost, takes a second statement. On SQLite
// it is one upsert, and when the upsert is refused one SELECT tells why (SQLite's
// RETURNING returns no unchanged row, and it has no data-modifying WITH). On
// MySQL/MariaDB a fresh key is one INSERT, a refused claim one more SELECT (none
// on MariaDB 10.5 and later, whose INSERT … RETURNING returns the stored record),
// and a reclaim a short transaction (see claimMySQL). A fingerprint
// mismatch on a live record returns an error matching gate.ErrKeyReuse; a reclaim
// past gate.MaxFence one matching gate.ErrFenceExhausted. Other errors are the
// database's, wrapped; context errors are returned as they are.
func (s *Store) Claim(ctx context.Context, req gate.ClaimRequest) (gate.ClaimResult, error) {
	done, err := s.admitClaim(ctx)
	if err != nil {
		return gate.ClaimResult{}, err
	}
	defer done()
	a := newClaimArgs(req)
	if s.dialect == MySQL {
		return s.claimMySQL(ctx, a)
	}
	var lastErr error
	for range maxAttempts {
		r, after, wrote := new(row), int64(0), true
		var err error
		if s.dialect == Postgres {
			err = s.queryRow(ctx, nil, s.q.claimOrRead,
				a.key, nullBytes(a.rawKey), a.leaseMs, a.ttlMs, a.token, a.owner, nullBytes(a.fp)).Scan(r.dest(&after, &wrote)...)
		} else {
			err = s.queryRow(ctx, nil, s.q.claim,
				a.key, nullBytes(a.rawKey), a.leaseMs, a.ttlMs, a.token, a.owner, nullBytes(a.fp)).Scan(r.dest(&after)...)
		}
		if err == nil && !wrote {
			// Refused, and the statement read the record: tell why.
			res, next, err := decide(r, after, a)
			if err != nil || next == nil {
				return res, err
			}
			continue // claimable as the snapshot had it: the upsert lost a race
		}
		if err == nil {
			if r, err = s.freshen(ctx, a, r, after); err != nil {
				return gate.ClaimResult{}, s.wrapErr(ctx, err, "claim %s: refresh lease", keyq(req.Key))
			}
			if r == nil {
				continue // taken over while its lease was stale: claim again
			}
			return a.won(r), nil
		}
		if rolledBack(err) {
			lastErr = err
			continue // a session at REPEATABLE READ or SERIALIZABLE met a concurrent claim
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return gate.ClaimResult{}, s.wrapErr(ctx, err, "claim %s", keyq(req.Key))
		}
		// Refused: read the record to tell why. If it changed in between (purged,
		// or its lease lapsed meanwhile) and is claimable now, upsert again.
		r, now, found, err := s.readRow(ctx, a.key)
		if err != nil {
			return gate.ClaimResult{}, s.wrapErr(ctx, err, "claim %s: read", keyq(req.Key))
		}
		if !found {
			continue
		}
		res, next, err := decide(r, now, a)
		if err != nil || next == nil {
			return res, err
		}
	}
	return gate.ClaimResult{}, fmt.Errorf("sqlgate: claim %s: %d lost races in a row (last error: %v)", keyq(req.Key), maxAttempts, lastErr)
}

// readRow reads the stored row for key (stored form) and the server clock.
func (s *Store) readRow(ctx context.Context, key string) (*row, int64, bool, error) {
	r := new(row)
	var now int64
	err := s.queryRow(ctx, nil, s.q.read, key).Scan(r.dest(&now)...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	return r, now, true, nil
}
