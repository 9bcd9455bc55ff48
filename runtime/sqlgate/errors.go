package sqlgate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"
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

// retryableMySQL reports whether err is a lost race that the claim transaction
// retries: a deadlock (InnoDB rolled the transaction back), a duplicate key on
// the insert of a fresh record (another caller inserted it first), or a record
// changed since a snapshot read.
func retryableMySQL(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Number {
	case mysqlDupEntry, mysqlDeadlock, mysqlRecChanged:
		return true
	}
	return false
}

// deadlockMySQL reports whether err is an InnoDB deadlock: the statement's
// transaction was rolled back whole.
func deadlockMySQL(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == mysqlDeadlock
}
