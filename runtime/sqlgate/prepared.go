package sqlgate

import (
	"context"
	"database/sql"
	"errors"
)

// Statements run prepared: each is prepared once per Store and, by
// database/sql, once per pooled connection it runs on, then only executed. This
// matters most on SQLite, where parsing the claim upsert would otherwise cost
// more CPU than running it, and on a MySQL pool without interpolateParams, where
// an unprepared statement with arguments is a prepare, an execute and a close.

// prepared returns st prepared on the pool, preparing it on first use. A failed
// prepare (say, before CreateSchema) is not kept.
func (s *Store) prepared(ctx context.Context, st stmt) (*sql.Stmt, error) {
	if v, ok := s.stmts.Load(st.text); ok {
		return v.(*sql.Stmt), nil
	}
	p, err := s.db.PrepareContext(ctx, st.text)
	if err != nil {
		return nil, err
	}
	if v, loaded := s.stmts.LoadOrStore(st.text, p); loaded {
		_ = p.Close()
		return v.(*sql.Stmt), nil
	}
	return p, nil
}

// on returns st prepared for tx, or for the pool when tx is nil. Inside a
// transaction a statement not yet prepared on the pool is prepared on the
// transaction's connection only: preparing on the pool would wait for a second
// connection, forever when the transaction holds the pool's last one. Callers
// warm the cache with warm before they begin.
func (s *Store) on(ctx context.Context, tx *sql.Tx, st stmt) (*sql.Stmt, error) {
	if tx == nil {
		return s.prepared(ctx, st)
	}
	if v, ok := s.stmts.Load(st.text); ok {
		return tx.StmtContext(ctx, v.(*sql.Stmt)), nil
	}
	return tx.PrepareContext(ctx, st.text)
}

// warm prepares sts on the pool, before a transaction that runs them begins. A
// failure is left for the statement's own run to report.
func (s *Store) warm(ctx context.Context, sts ...stmt) {
	for _, st := range sts {
		_, _ = s.prepared(ctx, st)
	}
}

// row is the result of queryRow: a *sql.Row, or the error preparing it.
type rowResult struct {
	row *sql.Row
	err error
}

// Scan is sql.Row's Scan.
func (r rowResult) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.row.Scan(dest...)
}

// queryRow runs st in tx (nil: on the pool) with the template's arguments.
func (s *Store) queryRow(ctx context.Context, tx *sql.Tx, st stmt, args ...any) rowResult {
	p, err := s.on(ctx, tx, st)
	if err != nil {
		return rowResult{err: err}
	}
	return rowResult{row: p.QueryRowContext(ctx, st.args(args...)...)}
}

// execOnce runs st once in tx (nil: on the pool).
func (s *Store) execOnce(ctx context.Context, tx *sql.Tx, st stmt, args ...any) (sql.Result, error) {
	p, err := s.on(ctx, tx, st)
	if err != nil {
		return nil, err
	}
	return p.ExecContext(ctx, st.args(args...)...)
}

// query runs st on the pool.
func (s *Store) query(ctx context.Context, st stmt, args ...any) (*sql.Rows, error) {
	p, err := s.prepared(ctx, st)
	if err != nil {
		return nil, err
	}
	return p.QueryContext(ctx, st.args(args...)...)
}

// closeStmts closes the prepared statements.
func (s *Store) closeStmts() error {
	var errs []error
	s.stmts.Range(func(k, v any) bool {
		s.stmts.Delete(k)
		errs = append(errs, v.(*sql.Stmt).Close())
		return true
	})
	return errors.Join(errs...)
}
