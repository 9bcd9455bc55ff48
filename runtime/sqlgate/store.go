package sqlgate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/oncegate/oncegate/runtime/gate"
)

// Options configure a Store. The zero value (or nil) means defaults.
type Options struct {
	// Table is the table holding the records. Default DefaultTable
	// ("oncegate_records"). It must be a plain identifier (ASCII letters, digits
	// and underscores, not starting with a digit, at most 63 bytes); it is quoted
	// in every statement, so on PostgreSQL its case is kept as given.
	Table string
	// MaxConns bounds the pool (sql.DB.SetMaxOpenConns, and SetMaxIdleConns to
	// match): a delivery past the bound waits for a free connection, within its
	// claim's context, instead of opening one more than the database allows
	// (PostgreSQL's max_connections or a role's CONNECTION LIMIT, MySQL's
	// max_user_connections), which fails. Zero: Open uses DefaultMaxConns, and New
	// leaves the caller's pool as configured. Negative is an error. Set it to at
	// most the connections the database grants this user, less any other pools.
	//
	// On a bounded pool (however bounded, when New reads it) a quarter of the
	// connections (rounded down, at least one) is kept from claims, so what runs
	// after a body (complete, fail, release, unknown mark) never waits behind new
	// claims. A pool of one connection can keep none: there the after-body
	// writes queue with claims for it, and under load can spend their budget
	// and be answered not-recorded; use 2 or more where deliveries overlap.
	MaxConns int
}

// Store is the SQL backend. It is safe for concurrent use; every method runs its
// own statements (or, for a MySQL claim, its own short transaction) on the pool.
type Store struct {
	db      *sql.DB
	dialect Dialect
	table   string
	ownsDB  bool
	q       queries
	stmts   sync.Map      // statement text → *sql.Stmt; see prepared
	claims  chan struct{} // claim slots on a bounded pool; see claimSlots
	// returning is whether a MySQL-dialect server takes insertOrReadMariaDB
	// (returningUnknown until the first claim asks; see mariaDBReturning).
	returning atomic.Int32
}

var _ gate.Admin = (*Store)(nil)

// New returns a Store over db, a pool the caller configured for dialect d. It
// does not touch the database: create the table with CreateSchema or your own
// migrations (see DDL). It returns an error naming the field when db is nil, d is
// not a known Dialect, opts.Table is not a plain identifier, or opts.MaxConns is
// negative. A positive opts.MaxConns bounds db; the bound db has when New returns
// sizes the claims' share of it (see Options.MaxConns). Close does not close db.
func New(db *sql.DB, d Dialect, opts *Options) (*Store, error) {
	if db == nil {
		return nil, fmt.Errorf("sqlgate.New: db is nil")
	}
	if !d.valid() {
		return nil, fmt.Errorf("sqlgate.New: dialect %d is not one of Postgres, MySQL, SQLite", int(d))
	}
	table := DefaultTable
	if opts != nil && opts.Table != "" {
		table = opts.Table
	}
	if err := checkIdent(table); err != nil {
		return nil, fmt.Errorf("sqlgate.Options.Table: %w; use a plain identifier such as %q", err, DefaultTable)
	}
	if opts != nil && opts.MaxConns < 0 {
		return nil, fmt.Errorf("sqlgate.Options.MaxConns: must be positive, or zero for the default (got %d)", opts.MaxConns)
	}
	if opts != nil {
		applyPoolBound(db, opts.MaxConns)
	}
	return &Store{db: db, dialect: d, table: table, q: buildQueries(d, table),
		claims: claimSlots(db.Stats().MaxOpenConnections)}, nil
}

// DB returns the Store's pool.
func (s *Store) DB() *sql.DB { return s.db }

// Dialect returns the Store's dialect.
func (s *Store) Dialect() Dialect { return s.dialect }

// Table returns the name of the Store's table (unquoted).
func (s *Store) Table() string { return s.table }

// Close closes the Store's prepared statements, and the pool when Open made it
// (a Store made by New leaves the pool to its owner). It returns the errors
// closing them. The Store must not be used after Close.
func (s *Store) Close() error {
	err := s.closeStmts()
	if s.ownsDB {
		err = errors.Join(err, s.db.Close())
	}
	return err
}

// maxAttempts bounds the retries of a lost race inside one call: a MySQL
// deadlock or duplicate key, a PostgreSQL serialization failure, or a record
// that changed between a refused upsert and the SELECT that explains it.
const maxAttempts = 8

// exec runs a single statement. A statement the database rolled back whole
// because of a concurrent one (see rolledBack) is run again, up to maxAttempts
// times: a lost lock race is not a store failure.
func (s *Store) exec(ctx context.Context, st stmt, args ...any) (sql.Result, error) {
	for attempt := 1; ; attempt++ {
		res, err := s.execOnce(ctx, nil, st, args...)
		if err == nil || !rolledBack(err) || attempt >= maxAttempts {
			return res, err
		}
	}
}

// one reports whether res changed exactly one row.
func one(res sql.Result) (bool, error) {
	n, err := res.RowsAffected()
	return n == 1, err
}
