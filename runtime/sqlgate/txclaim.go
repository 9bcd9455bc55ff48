package sqlgate

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/oncegate/oncegate/runtime/gate"
	"modernc.org/sqlite"
)

// txQueries are the statements of the in-transaction mode and the
// transaction-scoped lock that the pool-side queries lack, rendered once per
// dialect and table.
type txQueries struct {
	claimOrLock stmt // MySQL: insert a fresh claim, or lock the existing row, changing nothing
	lockRow     stmt // MySQL: LockTx's lock row, inserted or locked
	noWait      stmt // MySQL: save and zero the session's lock wait timeout
	restoreWait stmt // MySQL: restore it
	advisory    stmt // PostgreSQL: wait for an advisory transaction lock
	tryAdvisory stmt // PostgreSQL: try it
	writeLock   stmt // SQLite: take the database write lock
}

const (
	// claimOrLockMySQL inserts a fresh claimed record like insertFresh (without
	// touching the session's LAST_INSERT_ID) or, when the key exists, changes
	// nothing but leaves the row exclusively locked: INSERT … ON DUPLICATE KEY
	// UPDATE takes an exclusive lock on a duplicate row where a plain INSERT takes
	// a shared one (MySQL reference manual, "Locks Set by Different SQL Statements
	// in InnoDB"), so two transactions on one existing key queue on the row
	// instead of deadlocking on a shared-to-exclusive upgrade.
	claimOrLockMySQL = `INSERT INTO {T} (` + cols + `)
VALUES ($1, $2, 'claimed', 1, {NOW} + $3, NULL, {NOW} + $3 + $4, $5, $6, $7, NULL)
ON DUPLICATE KEY UPDATE {K} = {K}`
	// lockRowMySQL is LockTx's row on MySQL: a done record under a key no caller
	// key maps to (see lockRowKey), kept $2 ms, then left to Purge.
	lockRowMySQL = `INSERT INTO {T} (` + cols + `)
VALUES ($1, NULL, 'done', 1, {NOW}, {NOW}, {NOW} + $2, '', 'oncegate LockTx', NULL, NULL)
ON DUPLICATE KEY UPDATE {K} = {K}`
)

var txqCache sync.Map // txqKey → *txQueries

type txqKey struct {
	d     Dialect
	table string
}

// txq returns the Store's in-transaction statements.
func (s *Store) txq() *txQueries {
	k := txqKey{s.dialect, s.table}
	if v, ok := txqCache.Load(k); ok {
		return v.(*txQueries)
	}
	r := func(tmpl string) stmt { return s.dialect.render(tmpl, s.table) }
	q := &txQueries{}
	switch s.dialect {
	case MySQL:
		q.claimOrLock = r(claimOrLockMySQL)
		q.lockRow = r(lockRowMySQL)
		q.noWait = r(`SET @oncegate_lock_wait = @@SESSION.innodb_lock_wait_timeout, SESSION innodb_lock_wait_timeout = 0`)
		q.restoreWait = r(`SET SESSION innodb_lock_wait_timeout = @oncegate_lock_wait`)
	case Postgres:
		q.advisory = r(`SELECT pg_advisory_xact_lock($1)`)
		q.tryAdvisory = r(`SELECT pg_try_advisory_xact_lock($1)`)
	default:
		q.writeLock = r(`UPDATE {T} SET fence = fence WHERE 0`)
	}
	v, _ := txqCache.LoadOrStore(k, q)
	return v.(*txQueries)
}

// lockID is a PostgreSQL advisory lock id: the first 8 bytes of SHA-256(name),
// big-endian, as a two's-complement int64.
func lockID(name string) int64 {
	sum := sha256.Sum256([]byte(name))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// txExec runs statements in a transaction: prepared, from the Store's cache,
// when the transaction is on the Store's own pool (RunTx, RunLocked); unprepared
// otherwise, since InTx's and LockTx's tx may come from another pool and
// database/sql refuses a statement prepared on another pool.
type txExec struct {
	s   *Store
	tx  *sql.Tx
	own bool
}

func (x txExec) queryRow(ctx context.Context, st stmt, args ...any) rowResult {
	if x.own {
		return x.s.queryRow(ctx, x.tx, st, args...)
	}
	return rowResult{row: x.tx.QueryRowContext(ctx, st.text, st.args(args...)...)}
}

func (x txExec) exec(ctx context.Context, st stmt, args ...any) (sql.Result, error) {
	if x.own {
		return x.s.execOnce(ctx, x.tx, st, args...)
	}
	return x.tx.ExecContext(ctx, st.text, st.args(args...)...)
}

// txStmts lists the statements the in-transaction mode and the lock run, for
// warm to prepare on the pool before RunTx or RunLocked begins.
func (s *Store) txStmts() []stmt {
	q := s.txq()
	switch s.dialect {
	case MySQL:
		return []stmt{q.claimOrLock, q.lockRow, q.noWait, q.restoreWait, s.q.lock, s.q.now, s.q.reclaim, s.q.finish}
	case Postgres:
		return []stmt{q.advisory, q.tryAdvisory, s.q.claim, s.q.read, s.q.finish}
	}
	return []stmt{q.writeLock, s.q.claim, s.q.read, s.q.finish}
}

// claimTx claims a inside x's transaction; errBusy when another transaction
// holds the key and noWait is set (or a lock wait timed out). A statement that
// fails is not run again: the transaction may be gone.
func (s *Store) claimTx(ctx context.Context, x txExec, a claimArgs, noWait bool) (gate.ClaimResult, error) {
	switch s.dialect {
	case MySQL:
		return s.claimMySQLTx(ctx, x, a, noWait)
	case Postgres:
		// Every in-transaction claim of a key first takes the key's advisory
		// transaction lock, so NoWait has something to try: a fresh key's
		// uncommitted row is invisible to other transactions, and the upsert would
		// wait on it without telling.
		q := s.txq()
		id := lockID("oncegate/claim/v1:" + s.table + ":" + a.key)
		if noWait {
			var got bool
			if err := x.queryRow(ctx, q.tryAdvisory, id).Scan(&got); err != nil {
				return gate.ClaimResult{}, err
			}
			if !got {
				return gate.ClaimResult{}, errBusy
			}
		} else if _, err := x.exec(ctx, q.advisory, id); err != nil {
			return gate.ClaimResult{}, asBusy(err)
		}
	}
	// PostgreSQL and SQLite: the pool-side upsert and read, in tx.
	for range maxAttempts {
		r, after := new(row), int64(0)
		err := x.queryRow(ctx, s.q.claim,
			a.key, nullBytes(a.rawKey), a.leaseMs, a.ttlMs, a.token, a.owner, nullBytes(a.fp)).Scan(r.dest(&after)...)
		if err == nil {
			// No freshen: the claim commits with its done record or not at all, so
			// no other transaction ever judges its lease.
			return a.won(r), nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return gate.ClaimResult{}, asBusy(err)
		}
		r, now := new(row), int64(0)
		err = x.queryRow(ctx, s.q.read, a.key).Scan(r.dest(&now)...)
		if errors.Is(err, sql.ErrNoRows) {
			continue // purged since the upsert was refused
		}
		if err != nil {
			return gate.ClaimResult{}, err
		}
		res, next, err := decide(r, now, a)
		if err != nil || next == nil {
			return res, err
		}
	}
	return gate.ClaimResult{}, fmt.Errorf("%d lost races in a row", maxAttempts)
}

// claimMySQLTx is claimTx on MySQL/MariaDB: claimOrLockMySQL, which leaves the
// key's row inserted or exclusively locked by tx, then the steps of
// reclaimMySQL on the locked row. A fresh row carries this call's claim token,
// so it is won without a clock read.
func (s *Store) claimMySQLTx(ctx context.Context, x txExec, a claimArgs, noWait bool) (gate.ClaimResult, error) {
	q := s.txq()
	for range maxAttempts {
		err := s.mysqlLockWait(ctx, x, noWait, func() error {
			_, err := x.exec(ctx, q.claimOrLock,
				a.key, nullBytes(a.rawKey), a.leaseMs, a.ttlMs, a.token, a.owner, nullBytes(a.fp))
			return err
		})
		if err != nil {
			return gate.ClaimResult{}, err
		}
		r := new(row)
		err = x.queryRow(ctx, s.q.lock, a.key).Scan(r.dest()...)
		if errors.Is(err, sql.ErrNoRows) {
			continue // cannot happen while tx holds the row; start over if it does
		}
		if err != nil {
			return gate.ClaimResult{}, err
		}
		if r.state == gate.StateClaimed && r.claimToken == a.token {
			return a.won(r), nil // inserted just now, however short its TTL
		}
		var now int64
		if err := x.queryRow(ctx, s.q.now).Scan(&now); err != nil {
			return gate.ClaimResult{}, err
		}
		res, next, err := decide(r, now, a)
		if err != nil || next == nil {
			return res, err
		}
		if _, err := x.exec(ctx, s.q.reclaim, next.key, nil, string(next.state),
			next.fence, next.leaseExpiry, next.expiresAt.Int64, next.claimToken, next.owner,
			nullBytes(next.fingerprint)); err != nil {
			return gate.ClaimResult{}, err
		}
		return res, nil
	}
	return gate.ClaimResult{}, fmt.Errorf("%d lost races in a row", maxAttempts)
}

// MySQL/MariaDB: ER_LOCK_WAIT_TIMEOUT. It rolls back only the statement unless
// the server runs with innodb_rollback_on_timeout=ON, when it rolls back the
// whole transaction. Source: MySQL reference manual, "InnoDB Error Handling".
const mysqlLockWaitTimeout = 1205

// mysqlLockWait runs stmt, a statement that may wait for a row lock, in x: with
// the session's innodb_lock_wait_timeout at 0 for it when noWait, restored
// after. A lock wait timeout becomes errBusy; if the server rolled the whole
// transaction back for it, the error says so.
func (s *Store) mysqlLockWait(ctx context.Context, x txExec, noWait bool, stmt func() error) error {
	q := s.txq()
	if noWait {
		if _, err := x.exec(ctx, q.noWait); err != nil {
			return err
		}
		defer func() { _, _ = x.exec(context.WithoutCancel(ctx), q.restoreWait) }()
	}
	err := stmt()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != mysqlLockWaitTimeout {
		return err
	}
	var whole bool
	if serr := x.tx.QueryRowContext(ctx, `SELECT @@GLOBAL.innodb_rollback_on_timeout`).Scan(&whole); serr == nil && whole {
		return fmt.Errorf("%w (the server rolled the whole transaction back: innodb_rollback_on_timeout is ON; "+
			"turn it OFF to keep the transaction usable): %w", errBusy, err)
	}
	return fmt.Errorf("%w: %w", errBusy, err)
}

// SQLite result codes: SQLITE_BUSY, and its extended code SQLITE_BUSY_SNAPSHOT (a
// deferred transaction whose read snapshot is older than the last commit cannot
// start writing; the busy timeout does not apply). Source: SQLite "Result and
// Error Codes".
const (
	sqliteBusyCode         = 5
	sqliteBusySnapshotCode = 5 | 2<<8
)

// PostgreSQL SQLSTATE lock_not_available: lock_timeout passed while a
// statement waited for a lock. Source: PostgreSQL documentation, Appendix A.
const pgLockNotAvailable = "55P03"

// asBusy turns a lock wait that timed out into errBusy: a PostgreSQL
// lock_not_available, or a plain SQLITE_BUSY (another connection held the
// database write lock past the busy timeout). Other errors, and
// SQLITE_BUSY_SNAPSHOT, are returned as they are.
func asBusy(err error) error {
	var se *sqlite.Error
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &se) && se.Code()&0xff == sqliteBusyCode && se.Code() != sqliteBusySnapshotCode,
		errors.As(err, &pe) && pe.Code == pgLockNotAvailable:
		return fmt.Errorf("%w: %w", errBusy, err)
	}
	return err
}
