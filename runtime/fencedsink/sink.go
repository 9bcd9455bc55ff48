package fencedsink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/oncegate/oncegate/runtime/gate"
)

// ErrStaleToken: a token at least as new as the caller's already took the key's
// term, so the write was refused and the caller's term is over. Returned by
// Take, Hold, Affected, Term.Guard and Term.Write. The caller must stop writing
// under this token; acquiring the lock again gives a newer one.
var ErrStaleToken = errors.New("oncegate: stale fencing token")

// Dialect picks the SQL flavour of a Sink's statements.
type Dialect int

const (
	// Postgres is PostgreSQL 9.5 or later ($1 placeholders; INSERT … ON CONFLICT).
	Postgres Dialect = iota
	// SQLite is SQLite 3.24 or later (?1 placeholders; INSERT … ON CONFLICT).
	SQLite
)

// String returns "postgres" or "sqlite".
func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "postgres"
	case SQLite:
		return "sqlite"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// Options configure a Sink. The zero value (or nil) means every default.
type Options struct {
	// KeyColumn is the column holding the lock key; it must be the primary key
	// or have a unique constraint. Default "key".
	KeyColumn string
	// FenceColumn is the BIGINT column holding the highest token that took the
	// key's term. Default "fence".
	FenceColumn string
	// Dialect is the database's SQL flavour. Default Postgres.
	Dialect Dialect
}

// Execer runs a statement: *sql.DB, *sql.Tx and *sql.Conn are Execers.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Queryer reads one row: *sql.DB, *sql.Tx and *sql.Conn are Queryers.
type Queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Sink is a table whose rows carry a fence column that guards writes per key.
// It holds only SQL text, so it is safe for concurrent use.
type Sink struct {
	table, key, fence string
	dialect           Dialect
	take, hold, read  string
}

// ident is an unquoted SQL identifier, as PostgreSQL and SQLite fold and accept
// it: a letter or underscore, then letters, digits or underscores, at most 63
// bytes (PostgreSQL's NAMEDATALEN−1).
var ident = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// New returns the Sink for table, which may be schema-qualified ("billing.fences").
// Identifiers are validated, never quoted, so they match tables created without
// quotes. It returns an error naming the bad field.
func New(table string, opts *Options) (*Sink, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.KeyColumn == "" {
		o.KeyColumn = "key"
	}
	if o.FenceColumn == "" {
		o.FenceColumn = "fence"
	}
	for _, part := range strings.Split(table, ".") {
		if !ident.MatchString(part) || strings.Count(table, ".") > 1 {
			return nil, fmt.Errorf("fencedsink.New: table %q: must be an identifier (letters, digits, _), optionally schema-qualified", table)
		}
	}
	for _, f := range []struct{ name, val string }{{"KeyColumn", o.KeyColumn}, {"FenceColumn", o.FenceColumn}} {
		if !ident.MatchString(f.val) {
			return nil, fmt.Errorf("fencedsink.Options.%s: %q must be an identifier (letters, digits, _)", f.name, f.val)
		}
	}
	if o.Dialect != Postgres && o.Dialect != SQLite {
		return nil, fmt.Errorf("fencedsink.Options.Dialect: %s is not supported; use Postgres or SQLite", o.Dialect)
	}
	s := &Sink{table: table, key: o.KeyColumn, fence: o.FenceColumn, dialect: o.Dialect}
	upsert := func(cmp string) string {
		return fmt.Sprintf("INSERT INTO %[1]s AS cur (%[2]s, %[3]s) VALUES (%[4]s, %[5]s) "+
			"ON CONFLICT (%[2]s) DO UPDATE SET %[3]s = excluded.%[3]s WHERE cur.%[3]s %[6]s excluded.%[3]s",
			table, s.key, s.fence, s.param(1), s.param(2), cmp)
	}
	s.take, s.hold = upsert("<"), upsert("<=")
	s.read = fmt.Sprintf("SELECT %s FROM %s WHERE %s = %s", s.fence, table, s.key, s.param(1))
	return s, nil
}

// param returns the dialect's placeholder for the n-th argument.
func (s *Sink) param(n int) string {
	if s.dialect == SQLite {
		return fmt.Sprintf("?%d", n)
	}
	return fmt.Sprintf("$%d", n)
}

// Table returns the table name as given to New.
func (s *Sink) Table() string { return s.table }

// TakeSQL returns the statement Take runs, with the key as the first argument and
// the token as the second.
func (s *Sink) TakeSQL() string { return s.take }

// HoldSQL returns the statement Hold runs, with the key as the first argument and
// the token as the second.
func (s *Sink) HoldSQL() string { return s.hold }

// CreateTable creates table, if it does not exist, as a dedicated fence table:
// the key as primary key and the fence as a BIGINT between 0 and gate.MaxFence.
// A table of the user's own can serve instead when its other columns are
// nullable or have defaults: the guards insert a missing key with only the key
// and the fence (PostgreSQL checks NOT NULL on that row even when the key
// exists). Otherwise guard the data table's own UPDATE with Affected.
func (s *Sink) CreateTable(ctx context.Context, x Execer) error {
	q := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (%s TEXT PRIMARY KEY, %s BIGINT NOT NULL DEFAULT 0 CHECK (%[3]s BETWEEN 0 AND %d))",
		s.table, s.key, s.fence, gate.MaxFence)
	if _, err := x.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("create table %s: %w", s.table, err)
	}
	return nil
}

// Take takes key's term for token: it stores token as the key's fence when the
// stored fence is lower (a key without a row counts as fence 0 and gets one). It returns an
// error matching ErrStaleToken when the fence is already token or higher. Run it
// in the transaction that writes the data: it locks the key's row until that
// transaction ends, so no other holder's guard passes in between.
func (s *Sink) Take(ctx context.Context, x Execer, key string, token int64) error {
	return s.exec(ctx, x, "take", s.take, key, token)
}

// Hold checks that token still holds key's term: the stored fence is at most
// token (and becomes token; a key without a row counts as fence 0 and gets
// one). It returns an error matching ErrStaleToken when a newer token took the
// term. Like Take, it locks the row until the transaction ends.
func (s *Sink) Hold(ctx context.Context, x Execer, key string, token int64) error {
	return s.exec(ctx, x, "hold", s.hold, key, token)
}

func (s *Sink) exec(ctx context.Context, x Execer, op, q, key string, token int64) error {
	if err := check(key, token); err != nil {
		return fmt.Errorf("%s %q: %w", op, key, err)
	}
	if err := Affected(x.ExecContext(ctx, q, key, token)); err != nil {
		return fmt.Errorf("%s %q with token %d: %w", op, key, token, err)
	}
	return nil
}

// Fence returns the highest token that took key's term, or 0 when the key has
// no row. The recovery procedure after the lock store lost data advances the
// lock's fence to it (see dlock.Client.AdvanceFence).
func (s *Sink) Fence(ctx context.Context, q Queryer, key string) (int64, error) {
	var f int64
	err := q.QueryRowContext(ctx, s.read, key).Scan(&f)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read fence %q: %w", key, err)
	}
	return f, nil
}

// Affected turns the result of a guarded statement of the caller's own (one
// whose WHERE clause compares the fence column with the token) into an error:
// err as it is, an error matching ErrStaleToken when no row was affected, else
// nil. Call it as Affected(tx.ExecContext(…)).
func Affected(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("rows affected: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("%w: zero rows affected; a newer token holds the term", ErrStaleToken)
	}
	return nil
}

// check validates a key and a token.
func check(key string, token int64) error {
	if key == "" {
		return errors.New("key is empty")
	}
	if token < 1 || token > gate.MaxFence {
		return fmt.Errorf("token %d out of range 1 to %d", token, gate.MaxFence)
	}
	return nil
}
