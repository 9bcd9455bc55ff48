package sqlgate

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// lockRowTTL is how long a MySQL lock row is kept after it is created; Purge
// removes it after that (a lock taken later creates it again).
const lockRowTTL = 24 * time.Hour

// LockTx takes the transaction-scoped lock on key in tx, waiting while another
// transaction holds it, and holds it until tx commits or rolls back: the
// simpler alternative to a lease when the work is one transaction. It records
// nothing about the key (use InTx for at-most-once); every transaction that
// takes the lock runs, one at a time per key. Lock the keys of one transaction
// in a fixed order: two transactions that lock the same keys in opposite orders
// deadlock, and the database aborts one of them (Retryable).
//
// The lock per dialect:
//
//   - PostgreSQL: pg_advisory_xact_lock(id), id = TxLockID(key). The server
//     releases it at commit or rollback, and when the connection dies.
//   - MySQL/MariaDB: an exclusive row lock on a lock row in the Store's table
//     (key "\x00txlock:" + hex(SHA-256(key)), which no caller key is stored as;
//     state done, owner "oncegate LockTx"; Purge deletes it a day after it was
//     created, and the next lock creates it again). InnoDB releases it at commit or
//     rollback. GET_LOCK is not used: its lock belongs to the session, not the
//     transaction, so it would outlive a commit the Store does not see.
//   - SQLite: the database write lock, taken by a write that changes nothing. It
//     covers every key: SQLite has one writer at a time. Begin the transaction
//     with _txlock=immediate, or call LockTx before it reads, since a deferred
//     transaction whose reads predate another connection's commit cannot take it
//     (SQLITE_BUSY_SNAPSHOT).
//
// The wait is bounded by ctx and the database's lock timeout (PostgreSQL
// lock_timeout, MySQL innodb_lock_wait_timeout, SQLite busy timeout); a timeout
// returns an error matching gate.ErrInProgress. Other errors are the database's,
// wrapped, or ctx's own; on any error the caller must roll tx back.
func (s *Store) LockTx(ctx context.Context, tx *sql.Tx, key string) error {
	_, err := s.lockTx(ctx, txExec{s: s, tx: tx}, key, false)
	return err
}

// TryLockTx is LockTx without the wait: it reports false at once, with tx
// still usable, when another transaction holds the lock (on SQLite: when
// another connection holds the database write lock; on MySQL it may also wait up
// to 1 s, MySQL's smallest innodb_lock_wait_timeout, where MariaDB waits none).
func (s *Store) TryLockTx(ctx context.Context, tx *sql.Tx, key string) (bool, error) {
	return s.lockTx(ctx, txExec{s: s, tx: tx}, key, true)
}

// TxLockID returns the PostgreSQL advisory lock id LockTx takes for key: the
// first 8 bytes, big-endian, of SHA-256("oncegate/txlock/v1:" + table + ":" +
// key) as a two's-complement int64, where table is the Store's table name. Other
// programs take the same lock with
//
//	SELECT pg_advisory_xact_lock(('x' || left(encode(sha256(convert_to(
//	    'oncegate/txlock/v1:' || <table> || ':' || <key>, 'UTF8')), 'hex'), 16))::bit(64)::bigint)
//
// Advisory lock ids share one space per database: a program that picks its own
// small ids collides with these only by a 64-bit chance.
func (s *Store) TxLockID(key string) int64 {
	return lockID("oncegate/txlock/v1:" + s.table + ":" + key)
}

// RunLocked runs fn in a transaction it begins on the Store's pool (at
// TxOptions.Isolation) while holding key's transaction-scoped lock (LockTx),
// then commits: every call runs, one at a time per key, like gate.Mutex over one
// transaction. With TxOptions.NoWait it returns an error matching
// gate.ErrInProgress when the lock is held, without running fn. TxOptions.Namespace
// prefixes the key; the other options are not used. Like RunTx, it runs the
// transaction again (fn included) when the database rolled it back for a
// deadlock or serialization failure (Retryable), and returns fn's error as it is,
// or gate.ErrStoreUnavailable wrapping a failed begin or commit.
func (s *Store) RunLocked(ctx context.Context, key string, opts *TxOptions, fn func(tx *sql.Tx) error) error {
	o, err := opts.resolve()
	if err != nil {
		return err
	}
	if fn == nil {
		return errors.New("sqlgate.RunLocked: fn is required")
	}
	if key == "" {
		return fmt.Errorf("%w: key is empty", gate.ErrInvalidKey)
	}
	key = o.key(key)
	s.warm(ctx, s.txStmts()...)
	return s.retryTx(ctx, o.Isolation, func(tx *sql.Tx) error {
		got, err := s.lockTx(ctx, txExec{s: s, tx: tx, own: true}, key, o.NoWait)
		if err != nil {
			return err
		}
		if !got {
			return fmt.Errorf("sqlgate: lock %s: %w: %w", keyq(key), errBusy, gate.ErrInProgress)
		}
		return fn(tx)
	})
}

func (s *Store) lockTx(ctx context.Context, x txExec, key string, try bool) (bool, error) {
	if x.tx == nil {
		return false, errors.New("sqlgate: lock: tx is required")
	}
	if key == "" {
		return false, fmt.Errorf("%w: key is empty", gate.ErrInvalidKey)
	}
	var err error
	q := s.txq()
	switch s.dialect {
	case Postgres:
		id := s.TxLockID(key)
		if try {
			var got bool
			if err := x.queryRow(ctx, q.tryAdvisory, id).Scan(&got); err != nil {
				return false, s.wrapErr(ctx, err, "lock %s", keyq(key))
			}
			return got, nil
		}
		_, err = x.exec(ctx, q.advisory, id)
		err = asBusy(err)
	case MySQL:
		err = s.mysqlLockWait(ctx, x, try, func() error {
			_, err := x.exec(ctx, q.lockRow, lockRowKey(key), millis(lockRowTTL))
			return err
		})
	default:
		err = s.sqliteWriteLock(ctx, x, try)
	}
	switch {
	case err == nil:
		return true, nil
	case try && errors.Is(err, errBusy):
		return false, nil
	case errors.Is(err, errBusy):
		return false, fmt.Errorf("sqlgate: lock %s: %w: %w", keyq(key), err, gate.ErrInProgress)
	}
	return false, s.wrapErr(ctx, err, "lock %s", keyq(key))
}

// lockRowKey is the stored key of key's MySQL lock row. Stored record keys never
// hold a NUL byte (gate.StoreKey hashes such keys), so it is no record's key.
func lockRowKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "\x00txlock:" + hex.EncodeToString(sum[:])
}

// sqliteWriteLock takes the SQLite database write lock in x; with try, with
// the connection's busy timeout at 0 for that statement. A plain SQLITE_BUSY is
// errBusy.
func (s *Store) sqliteWriteLock(ctx context.Context, x txExec, try bool) error {
	q, tx := s.txq(), x.tx
	if try {
		var old int64
		if err := tx.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&old); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `PRAGMA busy_timeout = 0`); err != nil {
			return err
		}
		defer func() {
			_, _ = tx.ExecContext(context.WithoutCancel(ctx), `PRAGMA busy_timeout = `+strconv.FormatInt(old, 10))
		}()
	}
	_, err := x.exec(ctx, q.writeLock)
	return asBusy(err)
}
