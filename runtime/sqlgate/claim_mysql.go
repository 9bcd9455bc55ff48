package sqlgate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/internal/dotted"
)

// claimMySQL claims on MySQL and MariaDB. It takes up to three steps, each
// ending the moment it has the answer:
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
//     own token, key reuse, fence exhausted), that is the answer. On MariaDB
//     10.5 and later, with a claim token, steps 1 and 2 are one statement
//     (insertOrReadMariaDB): the INSERT returns the stored record when the key
//     exists, so a refused claim is one round trip too.
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
		var (
			r     *row
			now   int64
			found bool
			err   error
		)
		w := startStopwatch()
		if a.token != "" && s.mariaDBReturning(ctx) {
			r, now, err = s.insertOrRead(ctx, a)
			if err == nil {
				res, next, err := decide(r, now, a)
				if err == nil && next == nil && res.Status == gate.Won && r.claimToken == a.token {
					// Inserted by this statement (or this token's own claim found
					// again): a lease computed before a wait is refreshed.
					if r, err = s.freshenMySQL(ctx, a, r, w.elapsed()); err != nil {
						return gate.ClaimResult{}, s.wrapErr(ctx, err, "claim %s: refresh lease", keyq(a.req.Key))
					}
					if r == nil {
						continue // taken over while its lease was stale: claim again
					}
					return a.won(r), nil
				}
				if next == nil && w.elapsed() > staleLeaseSlack {
					// The statement waited on the row lock: its NOW() is its start
					// time, before the wait, while the row it returned is the one
					// after (a Release committed meanwhile set lease_expiry past
					// it, say). Judge the row again on the clock now.
					if r, now, found, err = s.readRow(ctx, a.key); err != nil {
						return gate.ClaimResult{}, s.wrapErr(ctx, err, "claim %s: read", keyq(a.req.Key))
					}
					if !found {
						continue // purged meanwhile
					}
					if res, next, err = decide(r, now, a); err != nil || next == nil {
						return res, err
					}
				} else if err != nil || next == nil {
					return res, err
				}
				found = true // claimable: step 3
			} else if mysqlErrno(err) == mysqlParseError {
				s.returning.Store(returningNo) // a server that says MariaDB but refuses RETURNING
			} else if lostRace(err) {
				lastErr = err
				continue
			} else {
				return gate.ClaimResult{}, s.wrapErr(ctx, err, "claim %s: insert", keyq(a.req.Key))
			}
		}
		if !found {
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
			r, now, found, err = s.readRow(ctx, a.key)
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

// insertOrRead runs insertOrReadMariaDB: the row as inserted, or as stored when
// the key exists, and the statement's clock.
func (s *Store) insertOrRead(ctx context.Context, a claimArgs) (*row, int64, error) {
	r := new(row)
	var now int64
	err := s.queryRow(ctx, nil, s.q.insertOrRead,
		a.key, nullBytes(a.rawKey), a.leaseMs, a.ttlMs, a.token, a.owner, nullBytes(a.fp)).Scan(r.dest(&now)...)
	return r, now, err
}

// Whether the server takes insertOrReadMariaDB, as Store.returning holds it.
const (
	returningUnknown int32 = iota
	returningYes
	returningNo
)

// mariaDBReturning reports whether the server is MariaDB 10.5 or later, whose
// INSERT … RETURNING answers a refused claim in the INSERT's own round trip. It
// asks once per Store (SELECT VERSION()); a failed question is asked again on
// the next claim, which meanwhile takes the two-statement path.
func (s *Store) mariaDBReturning(ctx context.Context) bool {
	switch s.returning.Load() {
	case returningYes:
		return true
	case returningNo:
		return false
	}
	var v string
	if err := s.queryRow(ctx, nil, stmt{text: "SELECT VERSION()"}).Scan(&v); err != nil {
		return false
	}
	if mariaDBAtLeast(v, 10, 5) {
		s.returning.Store(returningYes)
		return true
	}
	s.returning.Store(returningNo)
	return false
}

// mariaDBAtLeast reports whether version, as VERSION() gives it ("10.11.6-MariaDB-0+deb12u1",
// or behind a "5.5.5-" replication prefix), is MariaDB major.minor or later.
func mariaDBAtLeast(version string, major, minor int) bool {
	if !strings.Contains(version, "MariaDB") {
		return false
	}
	return dotted.AtLeast(strings.TrimPrefix(version, "5.5.5-"), major, minor)
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
