package sqlgate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// wrapErr wraps a database error with short context. Context errors are
// returned unwrapped, as the gate package expects.
func (s *Store) wrapErr(ctx context.Context, err error, format string, args ...any) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return fmt.Errorf("sqlgate: "+format+": %w", append(args, err)...)
}

// keyq quotes a key for an error message, shortened when long: keys may be
// kilobytes long and hold any bytes.
func keyq(key string) string {
	if len(key) <= 80 {
		return fmt.Sprintf("%q", key)
	}
	sum := sha256.Sum256([]byte(key))
	return fmt.Sprintf("%q… (%d bytes, sha256 %s…)", key[:48], len(key), hex.EncodeToString(sum[:6]))
}

// MySQL/MariaDB server error numbers that mean the statement or transaction was
// rolled back whole and may be run again: nothing it did is kept.
// Source: MariaDB/MySQL server error reference (ER_LOCK_DEADLOCK 1213,
// ER_DUP_ENTRY 1062, ER_CHECKREAD 1020 "Record has changed since last read",
// returned by MariaDB's innodb_snapshot_isolation).
const (
	mysqlDupEntry   = 1062
	mysqlDeadlock   = 1213
	mysqlRecChanged = 1020
)

// mysqlParseError is ER_PARSE_ERROR (1064): the server did not understand the
// statement, as a MySQL-compatible server that calls itself MariaDB but lacks
// INSERT … RETURNING answers insertOrReadMariaDB.
const mysqlParseError = 1064

// mysqlErrno returns err's MySQL/MariaDB server error number, or 0.
func mysqlErrno(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// PostgreSQL SQLSTATEs of a transaction rolled back whole because of a
// concurrent one: serialization_failure (a session whose
// default_transaction_isolation is REPEATABLE READ or SERIALIZABLE, when a claim
// meets a concurrent claim's update) and deadlock_detected. Source: PostgreSQL
// documentation, Appendix A "PostgreSQL Error Codes".
const (
	pgSerializationFailure = "40001"
	pgDeadlockDetected     = "40P01"
)

// rolledBack reports whether err means the database rolled the statement's
// transaction back whole because of a concurrent one (an InnoDB deadlock, a
// PostgreSQL serialization failure or deadlock): nothing it did was kept, so a
// single statement or the claim may run again.
func rolledBack(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == mysqlDeadlock
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == pgSerializationFailure || pe.Code == pgDeadlockDetected
	}
	return false
}

// lostRace reports whether a claim attempt failed only because a concurrent
// caller got there first, so the claim starts over: rolledBack, a duplicate key
// on the insert of a fresh MySQL record, or a MariaDB record changed since a
// snapshot read.
func lostRace(err error) bool {
	if rolledBack(err) {
		return true
	}
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == mysqlDupEntry || me.Number == mysqlRecChanged)
}
