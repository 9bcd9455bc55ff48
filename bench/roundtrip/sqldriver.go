package roundtrip

import (
	"context"
	"database/sql/driver"
)

// Names of the counts Connector keeps. Each statement executed and each
// transaction verb is one round trip to a network database (pgx and
// go-sql-driver/mysql send a prepared statement's bind and execute, or a text
// query, in one exchange); SQLite runs them in process, so for it they count
// calls into the engine.
const (
	SQLExec     = "sql_exec"
	SQLQuery    = "sql_query"
	SQLBegin    = "sql_begin"
	SQLCommit   = "sql_commit"
	SQLRollback = "sql_rollback"
	// SQLPrepare counts statement preparations: database/sql prepares a
	// statement once per pooled connection it runs on, so these happen while
	// a pool warms up, not per message.
	SQLPrepare = "sql_prepare"
	// SQLConnect counts connections opened.
	SQLConnect = "sql_connect"
)

// SQLTrips lists the counts that are round trips per message.
var SQLTrips = []string{SQLExec, SQLQuery, SQLBegin, SQLCommit, SQLRollback}

// Connector wraps a driver.Connector and counts, in C, every statement
// executed, every transaction verb, every preparation and every connection.
// Open a pool on it with sql.OpenDB.
type Connector struct {
	Inner driver.Connector
	C     *Counter
}

var _ driver.Connector = Connector{}

// Connect implements driver.Connector.
func (k Connector) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := k.Inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	k.C.Add(SQLConnect, 1)
	return &conn{inner: c, c: k.C}, nil
}

// Driver implements driver.Connector.
func (k Connector) Driver() driver.Driver { return k.Inner.Driver() }

type conn struct {
	inner driver.Conn
	c     *Counter
}

var (
	_ driver.Conn               = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.SessionResetter    = (*conn)(nil)
	_ driver.Validator          = (*conn)(nil)
	_ driver.NamedValueChecker  = (*conn)(nil)
	_ driver.Pinger             = (*conn)(nil)
)

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	var (
		s   driver.Stmt
		err error
	)
	if p, ok := c.inner.(driver.ConnPrepareContext); ok {
		s, err = p.PrepareContext(ctx, query)
	} else {
		s, err = c.inner.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	add(ctx, c.c, SQLPrepare)
	return &stmt{inner: s, c: c.c, conn: c}, nil
}

func (c *conn) Close() error { return c.inner.Close() }

func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	add(ctx, c.c, SQLBegin)
	var (
		tx  driver.Tx
		err error
	)
	if b, ok := c.inner.(driver.ConnBeginTx); ok {
		tx, err = b.BeginTx(ctx, opts)
	} else {
		//lint:ignore SA1019 the fallback database/sql itself uses
		tx, err = c.inner.Begin()
	}
	if err != nil {
		return nil, err
	}
	return &txn{inner: tx, c: c.c, ctx: ctx}, nil
}

// ExecContext counts a statement sent without preparing it; when the driver
// cannot, ErrSkip makes database/sql prepare it (counted by the statement).
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.inner.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	r, err := e.ExecContext(ctx, query, args)
	if err != driver.ErrSkip {
		add(ctx, c.c, SQLExec)
	}
	return r, err
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.inner.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	r, err := q.QueryContext(ctx, query, args)
	if err != driver.ErrSkip {
		add(ctx, c.c, SQLQuery)
	}
	return r, err
}

func (c *conn) ResetSession(ctx context.Context) error {
	if r, ok := c.inner.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *conn) IsValid() bool {
	if v, ok := c.inner.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	if n, ok := c.inner.(driver.NamedValueChecker); ok {
		return n.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

func (c *conn) Ping(ctx context.Context) error {
	if p, ok := c.inner.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

type stmt struct {
	inner driver.Stmt
	c     *Counter
	conn  *conn
}

var (
	_ driver.StmtExecContext   = (*stmt)(nil)
	_ driver.StmtQueryContext  = (*stmt)(nil)
	_ driver.NamedValueChecker = (*stmt)(nil)
)

func (s *stmt) Close() error  { return s.inner.Close() }
func (s *stmt) NumInput() int { return s.inner.NumInput() }

func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.exec(context.Background(), args)
}

func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.query(context.Background(), args)
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if e, ok := s.inner.(driver.StmtExecContext); ok {
		add(ctx, s.c, SQLExec)
		return e.ExecContext(ctx, args)
	}
	return s.exec(ctx, values(args))
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if q, ok := s.inner.(driver.StmtQueryContext); ok {
		add(ctx, s.c, SQLQuery)
		return q.QueryContext(ctx, args)
	}
	return s.query(ctx, values(args))
}

// exec and query are database/sql's own fallbacks for a statement without the
// context methods.
func (s *stmt) exec(ctx context.Context, args []driver.Value) (driver.Result, error) {
	add(ctx, s.c, SQLExec)
	//lint:ignore SA1019 the fallback database/sql itself uses
	return s.inner.Exec(args)
}

func (s *stmt) query(ctx context.Context, args []driver.Value) (driver.Rows, error) {
	add(ctx, s.c, SQLQuery)
	//lint:ignore SA1019 the fallback database/sql itself uses
	return s.inner.Query(args)
}

// CheckNamedValue asks the statement, else its connection, as database/sql
// would ask the unwrapped pair.
func (s *stmt) CheckNamedValue(nv *driver.NamedValue) error {
	if n, ok := s.inner.(driver.NamedValueChecker); ok {
		return n.CheckNamedValue(nv)
	}
	return s.conn.CheckNamedValue(nv)
}

func values(args []driver.NamedValue) []driver.Value {
	v := make([]driver.Value, len(args))
	for i, a := range args {
		v[i] = a.Value
	}
	return v
}

// txn counts its end against the context that began it, which database/sql
// does not pass to Commit and Rollback.
type txn struct {
	inner driver.Tx
	c     *Counter
	ctx   context.Context
}

func (t *txn) Commit() error {
	add(t.ctx, t.c, SQLCommit)
	return t.inner.Commit()
}

func (t *txn) Rollback() error {
	add(t.ctx, t.c, SQLRollback)
	return t.inner.Rollback()
}

// DriverConnector returns a connector opening name with d: d's own
// OpenConnector when it has one, else database/sql's fallback (d.Open(name)
// per connection), so any driver can be wrapped by Connector.
func DriverConnector(d driver.Driver, name string) (driver.Connector, error) {
	if dc, ok := d.(driver.DriverContext); ok {
		return dc.OpenConnector(name)
	}
	return dsnConnector{d, name}, nil
}

type dsnConnector struct {
	d    driver.Driver
	name string
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.name) }
func (c dsnConnector) Driver() driver.Driver                        { return c.d }
