package sqlgate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// AdvanceFence implements gate.Backend: the stored fence becomes
// max(fence, atLeast) and is returned; it is never lowered. An absent key gets a
// lapsed claimed record (lease_expiry = now) with that fence and expires_at =
// now + ttl. atLeast past gate.MaxFence returns an error matching
// gate.ErrFenceExhausted.
func (s *Store) AdvanceFence(ctx context.Context, key string, atLeast int64, ttl time.Duration) (int64, error) {
	if atLeast > maxFence {
		return 0, fmt.Errorf("sqlgate: advance fence of %s to %d: %w", keyq(key), atLeast, gate.ErrFenceExhausted)
	}
	sk, raw := storedKey(key)
	args := []any{sk, nullBytes(raw), max(atLeast, 0), millis(ttl)}
	var fence int64
	if s.dialect != MySQL {
		err := s.queryRow(ctx, nil, s.q.advance, args...).Scan(&fence)
		if err != nil {
			return 0, s.wrapErr(ctx, err, "advance fence of %s", keyq(key))
		}
		return fence, nil
	}
	var err error
	for range maxAttempts {
		fence, err = s.advanceMySQL(ctx, sk, args)
		if err == nil || !rolledBack(err) {
			break
		}
	}
	if err != nil {
		return 0, s.wrapErr(ctx, err, "advance fence of %s", keyq(key))
	}
	return fence, nil
}

// advanceMySQL upserts and reads the fence back in one transaction, so the
// fence returned is the one this call left.
func (s *Store) advanceMySQL(ctx context.Context, sk string, args []any) (int64, error) {
	s.warm(ctx, s.q.advance, s.q.fenceOf)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := s.execOnce(ctx, tx, s.q.advance, args...); err != nil {
		return 0, err
	}
	var fence int64
	if err := s.queryRow(ctx, tx, s.q.fenceOf, sk).Scan(&fence); err != nil {
		return 0, err
	}
	return fence, tx.Commit()
}

// Inspect implements gate.Backend: it returns the record and true, or false
// when it is absent or expired on the server's clock. It changes nothing.
func (s *Store) Inspect(ctx context.Context, key string) (gate.Record, bool, error) {
	sk, _ := storedKey(key)
	r, now, found, err := s.readRow(ctx, sk)
	if err != nil {
		return gate.Record{}, false, s.wrapErr(ctx, err, "inspect %s", keyq(key))
	}
	if !found || r.expired(now) {
		return gate.Record{}, false, nil
	}
	return r.record(key), true, nil
}

// Purge implements gate.Admin: it deletes up to limit records (limit ≤ 0: all)
// whose expires_at has passed on the server's clock and returns how many. It
// never deletes a live claim (its expires_at is past its lease) or an unknown
// record (no expires_at). On PostgreSQL it skips rows a claim holds locked at
// that moment; a later Purge gets them.
func (s *Store) Purge(ctx context.Context, limit int) (int, error) {
	n := int64(math.MaxInt64)
	if limit > 0 {
		n = int64(limit)
	}
	res, err := s.exec(ctx, s.q.purge, n)
	if err != nil {
		return 0, s.wrapErr(ctx, err, "purge %s", s.table)
	}
	got, err := res.RowsAffected()
	if err != nil {
		return 0, s.wrapErr(ctx, err, "purge %s", s.table)
	}
	return int(got), nil
}

// ListUnresolved implements gate.Admin: up to limit unknown records
// (limit ≤ 0: all), oldest lease_expiry first, then by stored key. Each reports
// the caller's key (raw_key when the stored key is a hash).
func (s *Store) ListUnresolved(ctx context.Context, limit int) ([]gate.Record, error) {
	n := int64(math.MaxInt64)
	if limit > 0 {
		n = int64(limit)
	}
	rows, err := s.query(ctx, s.q.listUnresolved, n)
	if err != nil {
		return nil, s.wrapErr(ctx, err, "list unresolved in %s", s.table)
	}
	defer func() { _ = rows.Close() }()
	var out []gate.Record
	for rows.Next() {
		r := new(row)
		if err := rows.Scan(r.dest()...); err != nil {
			return nil, s.wrapErr(ctx, err, "list unresolved in %s", s.table)
		}
		out = append(out, r.record(r.callerKey()))
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrapErr(ctx, err, "list unresolved in %s", s.table)
	}
	return out, nil
}

// Resolve implements gate.Admin: an unknown record becomes done (asDone; done_at
// = now, expires_at = now + ttl) or a lapsed claim with fence+1 and no claim token
// (retry; lease_expiry = now, expires_at = now + ttl), so the next delivery runs
// the work again. It returns an error matching gate.ErrNotFound when the key is
// absent and gate.ErrNotUnknown when its state is not unknown.
func (s *Store) Resolve(ctx context.Context, key string, asDone bool, ttl time.Duration) error {
	sk, _ := storedKey(key)
	st := s.q.resolveRetry
	if asDone {
		st = s.q.resolveDone
	}
	res, err := s.exec(ctx, st, sk, millis(ttl))
	if err != nil {
		return s.wrapErr(ctx, err, "resolve %s", keyq(key))
	}
	if ok, err := one(res); err != nil || ok {
		return err
	}
	var state string
	err = s.queryRow(ctx, nil, s.q.stateOf, sk).Scan(&state)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("sqlgate: resolve %s: %w", keyq(key), gate.ErrNotFound)
	case err != nil:
		return s.wrapErr(ctx, err, "resolve %s", keyq(key))
	}
	return fmt.Errorf("sqlgate: resolve %s (state %s): %w", keyq(key), state, gate.ErrNotUnknown)
}
