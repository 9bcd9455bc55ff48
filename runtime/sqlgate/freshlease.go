package sqlgate

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// staleLeaseSlack bounds how far a won claim's lease may lag the server clock
// at the end of the claim statement. A claim statement computes its lease from
// a clock read before it writes; when the write waited on a conflicting
// uncommitted row (a fresh key held by an in-transaction claim that then rolled
// back, on PostgreSQL the INSERT's VALUES and on MySQL the statement's NOW()),
// that reading predates the wait, and the committed lease is short by the whole
// wait. A claim found more than this behind is given a fresh lease by a second
// statement before it is reported won.
const staleLeaseSlack = 50 * time.Millisecond

// refreshLeaseRow (PostgreSQL, SQLite) sets a just-won claim's lease and
// expiry from the clock now, guarded by its fence and token.
const refreshLeaseRow = `UPDATE {T} SET lease_expiry = {NOW} + $3, expires_at = {GREATEST}(expires_at, {NOW} + $3 + $4)
WHERE {K} = $1 AND state = 'claimed' AND fence = $2 AND claim_token = $5
RETURNING lease_expiry, expires_at`

// refreshLeaseMySQL is refreshLeaseRow on MySQL/MariaDB, which hands the clock
// it used back through LAST_INSERT_ID(expr), as insertFresh does.
const refreshLeaseMySQL = `UPDATE {T} SET lease_expiry = LAST_INSERT_ID({NOW}) + $3, expires_at = GREATEST(expires_at, {NOW} + $3 + $4)
WHERE {K} = $1 AND state = 'claimed' AND fence = $2 AND claim_token = $5`

// freshen returns r, the row a claim statement just wrote for a, or r with a
// lease and expiry from the clock now when the statement's clock reading was
// more than staleLeaseSlack older than after, the server clock when the
// statement ended (PostgreSQL, SQLite). It returns nil when the claim was taken
// over in between: its stale lease had already run out, so another claim won,
// and the caller must claim again (and find it held).
func (s *Store) freshen(ctx context.Context, a claimArgs, r *row, after int64) (*row, error) {
	if after-(r.leaseExpiry-a.leaseMs) <= staleLeaseSlack.Milliseconds() {
		return r, nil
	}
	err := s.queryRow(ctx, nil, s.q.refresh, a.key, r.fence, a.leaseMs, a.ttlMs, a.token).Scan(&r.leaseExpiry, &r.expiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// freshenMySQL is freshen on MySQL/MariaDB for a fresh record whose INSERT ran
// for waited: MySQL has no clock reading after the statement, so the
// statement's run time on the process's monotonic clock tells whether it
// waited (it is never compared with a lease). r is the row the INSERT wrote.
func (s *Store) freshenMySQL(ctx context.Context, a claimArgs, r *row, waited time.Duration) (*row, error) {
	if waited <= staleLeaseSlack {
		return r, nil
	}
	res, err := s.execOnce(ctx, nil, s.q.refresh, a.key, r.fence, a.leaseMs, a.ttlMs, a.token)
	if err != nil {
		return nil, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return nil, err
	}
	if n != 1 {
		return nil, nil // taken over in between
	}
	now, err := res.LastInsertId()
	if err != nil {
		return nil, err
	}
	r.leaseExpiry = now + a.leaseMs
	r.expiresAt = sql.NullInt64{Int64: max(r.expiresAt.Int64, now+a.leaseMs+a.ttlMs), Valid: true}
	return r, nil
}
