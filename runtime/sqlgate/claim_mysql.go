package sqlgate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/oncegate/oncegate/runtime/gate"
)

// claimMySQL claims on MySQL and MariaDB, which have no conditional upsert that
// returns the row. It takes up to three steps, each ending the moment it has the
// answer:
//
//  1. A plain INSERT of a fresh record (fence 1), the common case of a new key:
//     one round trip. LAST_INSERT_ID(expr) puts the server clock the statement
//     used into the OK packet, so the answer needs no second statement, unless
//     the INSERT waited on an uncommitted row of the same key that then rolled
//     back: its NOW() predates the wait, so a second statement sets the lease
//     from the clock after it (freshenMySQL). (MySQL
//     reference manual, LAST_INSERT_ID(expr): the value "is remembered as the next
//     value to be returned by LAST_INSERT_ID()"; the C API's mysql_insert_id(),
//     which go-sql-driver's LastInsertId reads, returns it too.)
//  2. On a duplicate key, a plain SELECT of the record and the server clock:
//     when the record is not claimable (held, done, failed, unknown, the caller's
//     own token, key reuse, fence exhausted), that is the answer.
//  3. When it is claimable, a short transaction: SELECT … FOR UPDATE, then the
//     server clock read by a statement that starts after the row lock is held
//     (NOW() and UTC_TIMESTAMP() are a statement's start time, so a clock read in
//     the locking SELECT would predate a wait for the lock, and the claim could
//     commit already expired), memgate's rules again, and the UPDATE.
//
// No transaction ever locks the gap of an absent key, so fresh-key claimers never
// deadlock on InnoDB gap locks. A lost race (duplicate key, deadlock, a record that
// changed or vanished between steps) starts over, so it never surfaces as an
// error: the loser answers HeldByOther or AlreadyDone.
func (s *Store) claimMySQL(ctx context.Context, a claimArgs) (gate.ClaimResult, error) {
	var lastErr error
	for range maxAttempts {
		w := startStopwatch()
		res, err := s.execOnce(ctx, nil, s.q.insert,
			a.key, nullBytes(a.rawKey), a.leaseMs, a.ttlMs, a.token, a.owner, nullBytes(a.fp))
		if err == nil {
			waited := w.elapsed()
			now, err := res.LastInsertId()
			if err != nil {
				return gate.ClaimResult{}, s.wrapErr(ctx, err, "claim %s: read clock", keyq(a.req.Key))
			}
			_, next, _ := decide(nil, now, a)
			if next, err = s.freshenMySQL(ctx, a, next, waited); err != nil {
				return gate.ClaimResult{}, s.wrapErr(ctx, err, "claim %s: refresh lease", keyq(a.req.Key))
			}
			if next == nil {
				continue // taken over while its lease was stale: claim again
			}
			return a.won(next), nil
		}
		if !lostRace(err) {
			return gate.ClaimResult{}, s.wrapErr(ctx, err, "claim %s: insert", keyq(a.req.Key))
		}
		r, now, found, err := s.readRow(ctx, a.key)
		if err != nil {
			return gate.ClaimResult{}, s.wrapErr(ctx, err, "claim %s: read", keyq(a.req.Key))
		}
		if !found {
			continue // purged since the insert failed
		}
		out, next, err := decide(r, now, a)
		if err != nil || next == nil {
			return out, err
		}
		out, again, err := s.reclaimMySQL(ctx, a)
		switch {
		case err != nil && lostRace(err):
			lastErr = err
		case err != nil:
			return gate.ClaimResult{}, s.wrapErr(ctx, err, "claim %s: reclaim", keyq(a.req.Key))
		case !again:
			return out, nil
		}
	}
	return gate.ClaimResult{}, fmt.Errorf("sqlgate: claim %s: %d lost races in a row (last: %v)", keyq(a.req.Key), maxAttempts, lastErr)
}

// reclaimMySQL runs step 3 of claimMySQL. It reports again = true when the record
// vanished, so the caller starts over with the INSERT. A decision not to write (a
// claim that won meanwhile, say) is returned as the answer.
func (s *Store) reclaimMySQL(ctx context.Context, a claimArgs) (res gate.ClaimResult, again bool, err error) {
	s.warm(ctx, s.q.lock, s.q.now, s.q.reclaim)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return gate.ClaimResult{}, false, err
	}
	defer func() { _ = tx.Rollback() }()
	r := new(row)
	err = s.queryRow(ctx, tx, s.q.lock, a.key).Scan(r.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return gate.ClaimResult{}, true, nil
	}
	if err != nil {
		return gate.ClaimResult{}, false, err
	}
	var now int64
	if err := s.queryRow(ctx, tx, s.q.now).Scan(&now); err != nil {
		return gate.ClaimResult{}, false, err
	}
	res, next, err := decide(r, now, a)
	if err != nil || next == nil {
		return res, false, err
	}
	if _, err := s.execOnce(ctx, tx, s.q.reclaim, next.key, nil, string(next.state),
		next.fence, next.leaseExpiry, next.expiresAt.Int64, next.claimToken, next.owner,
		nullBytes(next.fingerprint)); err != nil {
		return gate.ClaimResult{}, false, err
	}
	return res, false, tx.Commit()
}
