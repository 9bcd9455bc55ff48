package sqlgate

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// TxOptions configure InTx, RunTx and RunLocked. The zero value (or nil) means
// defaults.
type TxOptions struct {
	// Namespace prefixes the key as "<Namespace>:<key>", as gate.Options.Namespace
	// does, so a key run here and by a Gate with the same Namespace is one record.
	// Empty means no prefix.
	Namespace string
	// TTL is how long the done record is kept (expires_at = done_at + TTL): a
	// later call on the key within it answers gate.ErrDuplicate. Default
	// gate.DefaultTTL (48 hours, longer than any redelivery). Negative is an error.
	TTL time.Duration
	// NoWait makes a call that finds another transaction working on the same key
	// return an error matching gate.ErrInProgress at once, instead of waiting for
	// that transaction to commit or roll back (the default; the wait is bounded by
	// ctx and the database's own lock timeout). PostgreSQL: the key's advisory
	// transaction lock is tried, not awaited. MySQL/MariaDB: the claim statement
	// runs with innodb_lock_wait_timeout = 0 (MariaDB) or its minimum, 1 second
	// (MySQL). SQLite: no effect, since SQLite has one writer at a time and every
	// transaction waits for the database write lock, up to the busy timeout.
	NoWait bool
	// Owner names the holder in the record. Default "<hostname>/<pid>".
	Owner string
	// Payload, when non-nil, is fingerprinted (SHA-256) as gate.Call.Payload is:
	// a later call on the key with a different payload fails with
	// gate.ErrKeyReuse.
	Payload []byte
	// Isolation is the isolation level of the transactions RunTx and RunLocked
	// begin. Default sql.LevelDefault, the database's own (READ COMMITTED on
	// PostgreSQL, REPEATABLE READ on MySQL/MariaDB, SERIALIZABLE on SQLite).
	// InTx and LockTx use the caller's transaction as it is.
	Isolation sql.IsolationLevel
}

// resolve validates o and returns a copy with defaults applied.
func (o *TxOptions) resolve() (TxOptions, error) {
	var v TxOptions
	if o != nil {
		v = *o
	}
	if v.TTL < 0 {
		return v, fmt.Errorf("sqlgate.TxOptions.TTL: must be zero (default %s) or positive, got %s", gate.DefaultTTL, v.TTL)
	}
	if v.TTL == 0 {
		v.TTL = gate.DefaultTTL
	}
	if v.Owner == "" {
		host, _ := os.Hostname()
		v.Owner = host + "/" + strconv.Itoa(os.Getpid())
	}
	return v, nil
}

func (o TxOptions) key(key string) string {
	if o.Namespace == "" {
		return key
	}
	return o.Namespace + ":" + key
}

// TxBody is the work InTx and RunTx run once per key: writes through tx to the
// database that holds the Store's table, and nothing else (see InTx). c.Fence is
// the record's fencing token; c.LeaseExpiry is the claim time, since an
// in-transaction claim has no lease (the transaction excludes others).
type TxBody func(tx *sql.Tx, c gate.Claim) error

// InTx runs fn at most once per key inside the caller's transaction tx: it
// claims key in tx, runs fn(tx, claim), and writes the key's done record in tx.
// The claim, fn's writes and the done record commit or roll back together, so
// after a crash anywhere (a panic, a killed connection, a lost commit) the
// database holds either all of them or none, and the next delivery either finds
// the key done or runs fn afresh. This is exactly once, not effectively once —
// but only for writes to this database through tx. An effect outside the
// transaction (an HTTP call, an email, a message) is not undone by a rollback
// while the claim is, so it can repeat: guard those with gate.Lock or gate.Do,
// the default for external effects. tx may come from any pool on the database
// that holds the Store's table.
//
// InTx returns nil when fn ran and the done record was written; the caller then
// commits. A commit that fails leaves nothing, and the next delivery runs fn
// again; one whose answer alone was lost left everything, and the next delivery
// answers gate.ErrDuplicate. Otherwise InTx returns an error matching one of:
//
//   - gate.ErrDuplicate, gate.ErrFailed or gate.ErrUnknownOutcome, in a
//     *gate.RecordError: the key's record, as committed, says so; fn did not run.
//   - gate.ErrInProgress: another transaction is working on the key and
//     TxOptions.NoWait is set, or the database's lock wait timed out (a plain
//     wrapped error), or a gate.Lock holder elsewhere holds a live lease (in a
//     *gate.RecordError); fn did not run.
//   - a *gate.BodyError wrapping fn's error; a gate.Permanent error is treated
//     like any other, since nothing of this transaction is kept.
//   - gate.ErrKeyReuse, gate.ErrFenceExhausted or gate.ErrInvalidKey: refused
//     before fn ran.
//   - gate.ErrStoreUnavailable wrapping the database's error (the claim or the
//     done record could not be written), or ctx's own error.
//
// On every error the caller must roll tx back (on PostgreSQL a failed statement
// leaves nothing else possible). A refused claim writes nothing, so committing
// after ErrDuplicate or ErrInProgress is harmless; committing after fn's error
// commits fn's writes and a lapsed claim, which the next call reclaims at once.
// A panic in fn is not recovered: the caller's deferred Rollback undoes it.
//
// At REPEATABLE READ or SERIALIZABLE, a transaction that met a concurrent one on
// the same key may fail with a serialization error instead (Retryable reports
// it); run the whole transaction again, as RunTx does.
func (s *Store) InTx(ctx context.Context, tx *sql.Tx, key string, opts *TxOptions, fn TxBody) error {
	return s.inTx(ctx, txExec{s: s, tx: tx}, key, opts, fn)
}

func (s *Store) inTx(ctx context.Context, x txExec, key string, opts *TxOptions, fn TxBody) error {
	o, err := opts.resolve()
	if err != nil {
		return err
	}
	if x.tx == nil || fn == nil {
		return errors.New("sqlgate.InTx: tx and fn are required")
	}
	if key == "" {
		return fmt.Errorf("%w: key is empty", gate.ErrInvalidKey)
	}
	key = o.key(key)
	var fp []byte
	if o.Payload != nil {
		sum := sha256.Sum256(o.Payload)
		fp = sum[:]
	}
	a := newClaimArgs(gate.ClaimRequest{Key: key, Token: txToken(), Owner: o.Owner, TTL: o.TTL, Fingerprint: fp})
	res, err := s.claimTx(ctx, x, a, o.NoWait)
	if err != nil {
		return s.txErr(ctx, err, "in-transaction claim %s", keyq(key))
	}
	rec := res.Record
	switch res.Status {
	case gate.Won:
	case gate.HeldByOther:
		return &gate.RecordError{Err: gate.ErrInProgress, Record: rec}
	case gate.AlreadyDone:
		return &gate.RecordError{Err: gate.ErrDuplicate, Record: rec}
	case gate.Failed:
		return &gate.RecordError{Err: gate.ErrFailed, Record: rec}
	case gate.Unknown:
		return &gate.RecordError{Err: gate.ErrUnknownOutcome, Record: rec}
	default:
		return fmt.Errorf("%w: in-transaction claim %s: status %v", gate.ErrStoreUnavailable, keyq(key), res.Status)
	}
	c := gate.Claim{Key: key, Fence: rec.Fence, LeaseExpiry: rec.LeaseExpiry, Owner: o.Owner}
	if err := fn(x.tx, c); err != nil {
		return &gate.BodyError{Key: key, Fence: c.Fence, Err: err}
	}
	done, err := x.exec(ctx, s.q.finish, a.key, c.Fence, string(gate.StateDone), a.ttlMs, nil)
	if err != nil {
		return s.txErr(ctx, err, "in-transaction done record %s", keyq(key))
	}
	if ok, err := one(done); err != nil || !ok {
		return fmt.Errorf("%w: in-transaction done record %s: the claim at fence %d is gone from the transaction (err %v)",
			gate.ErrStoreUnavailable, keyq(key), c.Fence, err)
	}
	return nil
}

// RunTx runs fn at most once per key in a transaction it begins on the Store's
// pool (at TxOptions.Isolation): InTx, then commit. See InTx for when this mode
// fits (the effect is a write to this database) and when it is wrong (any
// external call). It returns InTx's answers, or gate.ErrStoreUnavailable
// wrapping a failed begin or commit: a commit whose answer was lost may have
// committed, and the next call on the key tells (gate.ErrDuplicate) or runs fn
// afresh.
//
// A transaction the database rolled back because of a concurrent one (Retryable:
// a deadlock, a serialization failure) is run again from the start, fn
// included, up to 8 attempts with a short random pause between: fn may be called
// more than once, but the writes of every attempt but the committed one were
// rolled back. A panic in fn rolls the transaction back and is re-raised.
func (s *Store) RunTx(ctx context.Context, key string, opts *TxOptions, fn TxBody) error {
	o, err := opts.resolve()
	if err != nil {
		return err
	}
	if fn == nil {
		return errors.New("sqlgate.RunTx: fn is required")
	}
	if key == "" {
		return fmt.Errorf("%w: key is empty", gate.ErrInvalidKey)
	}
	s.warm(ctx, s.txStmts()...)
	return s.retryTx(ctx, o.Isolation, func(tx *sql.Tx) error {
		return s.inTx(ctx, txExec{s: s, tx: tx, own: true}, key, opts, fn)
	})
}

// Retryable reports whether err means the database rolled the whole
// transaction back because of a concurrent one, so running the whole
// transaction again may succeed: a PostgreSQL serialization failure (SQLSTATE
// 40001) or deadlock (40P01), or a MySQL/MariaDB deadlock (error 1213). RunTx
// and RunLocked retry these themselves; a caller of InTx retries its own
// transaction.
func Retryable(err error) bool { return rolledBack(err) }

// retryTx runs body in a fresh transaction and commits it, again while the
// attempt failed with a Retryable error, up to maxAttempts.
func (s *Store) retryTx(ctx context.Context, iso sql.IsolationLevel, body func(tx *sql.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := s.attemptTx(ctx, iso, body)
		if err == nil || !Retryable(err) || attempt >= maxAttempts || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(time.Duration(mrand.Int64N(int64(attempt) * int64(5*time.Millisecond))))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

func (s *Store) attemptTx(ctx context.Context, iso sql.IsolationLevel, body func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: iso})
	if err != nil {
		return s.txErr(ctx, err, "begin")
	}
	defer func() { _ = tx.Rollback() }() // after Commit, a no-op; on a panic, the rollback
	if err := body(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return s.txErr(ctx, err, "commit")
	}
	return nil
}

// errBusy: another transaction holds the key's lock (NoWait), or the database's
// lock wait timed out.
var errBusy = errors.New("another transaction holds the key")

// txErr wraps a database error met in a transaction: errBusy as
// gate.ErrInProgress, key reuse and fence exhaustion as they are, context errors
// unwrapped, anything else as gate.ErrStoreUnavailable.
func (s *Store) txErr(ctx context.Context, err error, format string, args ...any) error {
	switch {
	case errors.Is(err, errBusy):
		return fmt.Errorf("sqlgate: "+format+": %w: %w", append(args, err, gate.ErrInProgress)...)
	case errors.Is(err, gate.ErrKeyReuse), errors.Is(err, gate.ErrFenceExhausted):
		return err
	}
	err = s.wrapErr(ctx, err, format, args...)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %w", gate.ErrStoreUnavailable, err)
}

// txToken returns a random claim token for an in-transaction claim.
func txToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b[:])
}
