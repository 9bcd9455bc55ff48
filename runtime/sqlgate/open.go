package sqlgate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers driver "sqlite"
)

// AcceptedSchemes names the DSN forms Open accepts, for error messages.
const AcceptedSchemes = "postgres://…, postgresql://…, mysql://user:pass@host:port/db?params, sqlite:<file path>"

// SQLite connection settings Open applies unless the DSN sets them: WAL journal
// mode, so readers never block the writer and several processes can share one
// file, and a busy timeout, so a writer waits for another's write lock instead of
// failing with SQLITE_BUSY. Source: https://www.sqlite.org/wal.html and
// https://www.sqlite.org/c3ref/busy_timeout.html.
const (
	sqliteBusyTimeoutMillis = "10000"
	sqliteJournalMode       = "WAL"
)

// Open connects to the database a DSN names, the scheme picking the driver, and
// returns a Store that owns the pool (Close closes it). It pings the database but
// does not create the table (see CreateSchema). Accepted forms:
//
//   - postgres://… or postgresql://… — PostgreSQL through pgx, the DSN passed to
//     pgx as given (pgx's URL parameters apply). A password may hold '@' (the
//     user information ends at the authority's last one); a '/', '?' or '#' in
//     it must be percent-encoded, and a DSN with an '@' after the host is
//     refused, since pgx would read the password's tail as the database and
//     quote it in its connect error.
//   - mysql://user:pass@host:port/db?params — MySQL or MariaDB through
//     go-sql-driver/mysql; params are that driver's DSN parameters (tls,
//     timeout, …). Port 3306 when absent; interpolateParams defaults to true.
//     As for PostgreSQL, a DSN with an '@' after the host is refused.
//   - sqlite:<path> — a SQLite file (sqlite:/var/lib/oncegate.db, sqlite:x.db, or
//     the URL form sqlite:///var/lib/oncegate.db), created when missing, with WAL
//     mode and a 10 s busy timeout set on every connection unless the DSN's
//     parameters (modernc.org/sqlite's _journal_mode, _busy_timeout, _pragma, …)
//     set them.
//
// Any other scheme is an error naming these. opts is as for New; the pool is
// bounded to opts.MaxConns connections, DefaultMaxConns when zero.
func Open(ctx context.Context, dsn string, opts *Options) (*Store, error) {
	db, d, err := openDB(dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlgate.Open: %w", err)
	}
	o := Options{MaxConns: DefaultMaxConns()}
	if opts != nil {
		o.Table = opts.Table
		if opts.MaxConns != 0 {
			o.MaxConns = opts.MaxConns
		}
	}
	s, err := New(db, d, &o)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	s.ownsDB = true
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, s.wrapErr(ctx, err, "open %s database", d)
	}
	return s, nil
}

// openDB parses dsn and opens (without connecting) the pool for its dialect.
func openDB(dsn string) (*sql.DB, Dialect, error) {
	scheme, rest, ok := strings.Cut(dsn, ":")
	if !ok || scheme == "" {
		return nil, 0, fmt.Errorf("DSN has no scheme; want one of %s", AcceptedSchemes)
	}
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
		if err := atAfterHost("postgres", dsn); err != nil {
			return nil, 0, err
		}
		cfg, err := pgx.ParseConfig(postgresURL(dsn))
		if err != nil {
			return nil, 0, fmt.Errorf("postgres DSN: %w", redactPostgresError(err))
		}
		return stdlib.OpenDB(*cfg), Postgres, nil
	case "mysql":
		cfg, err := mysqlConfig(dsn)
		if err != nil {
			return nil, 0, err
		}
		c, err := mysql.NewConnector(cfg)
		if err != nil {
			return nil, 0, fmt.Errorf("mysql DSN: %w", err)
		}
		return sql.OpenDB(c), MySQL, nil
	case "sqlite":
		name, err := sqliteName(rest)
		if err != nil {
			return nil, 0, err
		}
		db, err := sql.Open("sqlite", name)
		return db, SQLite, err
	}
	return nil, 0, fmt.Errorf("DSN scheme %q is not supported; want one of %s", scheme, AcceptedSchemes)
}

// mysqlConfig converts mysql://user:pass@host:port/db?params into
// go-sql-driver/mysql's configuration.
func mysqlConfig(dsn string) (*mysql.Config, error) {
	if err := atAfterHost("mysql", dsn); err != nil {
		return nil, err
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("mysql DSN: %w", redactURLError(err))
	}
	if u.Host == "" {
		return nil, errors.New("mysql DSN: no host; want mysql://user:pass@host:port/db?params")
	}
	db := strings.TrimPrefix(u.Path, "/")
	if strings.Contains(db, "/") {
		return nil, errors.New("mysql DSN: the database name holds a '/' (not quoted here: a misplaced password may follow it)")
	}
	// Parsing "/db?params" validates the parameters with the driver's own rules.
	q := u.Query()
	if !q.Has("interpolateParams") {
		q.Set("interpolateParams", "true")
	}
	cfg, err := mysql.ParseDSN("/" + url.PathEscape(db) + "?" + q.Encode())
	if err != nil {
		return nil, fmt.Errorf("mysql DSN parameters: %w", err)
	}
	cfg.DBName = db
	cfg.Net = "tcp"
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "3306"
	}
	cfg.Addr = net.JoinHostPort(host, port)
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	return cfg, nil
}

// redactURLError drops the DSN (which may hold a password) and the parse details
// (an invalid port may be part of a password holding a slash) from a url error.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return errors.New("malformed URL (details withheld: they may quote part of the password)")
	}
	return err
}

// postgresURL returns a postgres:// or postgresql:// DSN whose user
// information holds more than one '@' with that information split at the last
// one, as Go's net/url and go-redis read it, and re-encoded: a password may then
// hold '@', and no part of it is read as the host (pgx splits at the first '@',
// and quoted the rest of the password as a host name it could not resolve).
// Any other DSN is returned as it is.
func postgresURL(dsn string) string {
	scheme, rest, ok := strings.Cut(dsn, "://")
	if !ok {
		return dsn
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority := rest[:end]
	at := strings.LastIndex(authority, "@")
	if at < 0 || strings.Count(authority, "@") < 2 {
		return dsn
	}
	user, pass, hasPass := strings.Cut(authority[:at], ":")
	unescape := func(s string) string {
		if u, err := url.PathUnescape(s); err == nil {
			return u
		}
		return s
	}
	info := url.User(unescape(user))
	if hasPass {
		info = url.UserPassword(unescape(user), unescape(pass))
	}
	return scheme + "://" + info.String() + authority[at:] + rest[end:]
}

// atAfterHost refuses a URL DSN (driver names it in the error) with an '@'
// after its authority (in the path, query or fragment): that is a password
// holding '/', '?' or '#' not percent-encoded, whose head the URL parsers read
// as the port and whose tail as the database, which a connect error then quotes
// (pgx: "failed to connect to `user=u database=S3cr@h:5432/db`"). An '@' meant
// in a database name or parameter is written %40.
func atAfterHost(driver, dsn string) error {
	_, rest, ok := strings.Cut(dsn, "://")
	if !ok {
		return nil
	}
	if end := strings.IndexAny(rest, "/?#"); end >= 0 && strings.Contains(rest[end:], "@") {
		return fmt.Errorf("%s DSN: an '@' follows the host (not quoted here: it may end a password); "+
			"percent-encode a '/', '?' or '#' in the password (%%2F, %%3F, %%23) and an '@' in the database or a parameter (%%40)", driver)
	}
	return nil
}

// redactPostgresError keeps pgx's reason for refusing a DSN and drops the DSN
// it quotes: pgx masks passwords only on a best-effort basis (its
// ParseConfigError doc says malformed input can be too ambiguous to redact).
func redactPostgresError(err error) error {
	var pe *pgconn.ParseConfigError
	if !errors.As(err, &pe) {
		return errors.New("malformed (details withheld: they may quote part of the password)")
	}
	reason := "unreadable"
	if msg := pe.Error(); strings.HasPrefix(msg, "cannot parse `") {
		if i := strings.LastIndex(msg, "`: "); i >= 0 {
			reason = msg[i+3:]
		}
	}
	if pe.ConnString != "" {
		reason = strings.ReplaceAll(reason, pe.ConnString, "…")
	}
	// pgx quotes the values it refuses, and a value may itself hold quotes: drop
	// everything from the first quote to the last.
	if i, j := strings.IndexAny(reason, "\"`"), strings.LastIndexAny(reason, "\"`"); i >= 0 {
		reason = reason[:i] + "\"…\"" + reason[j+1:]
	}
	return fmt.Errorf("%s (the DSN is withheld: it may hold a password); want %s", reason,
		"postgres://user:password@host:port/db?params with reserved characters in the password percent-encoded")
}

// sqliteName turns the part of a sqlite: DSN after the colon into
// modernc.org/sqlite's data source name: the file path with the driver's query
// parameters, WAL mode and the busy timeout added unless already set.
func sqliteName(rest string) (string, error) {
	path, query, _ := strings.Cut(rest, "?")
	path = strings.TrimPrefix(path, "//") // sqlite:///abs/path or sqlite://rel/path
	if path == "" {
		return "", errors.New("sqlite DSN has no file path; want sqlite:/path/to/file.db")
	}
	if path == ":memory:" || strings.HasPrefix(path, "file:") {
		return "", fmt.Errorf("sqlite DSN %q: want a plain file path (each pooled connection to an in-memory database is a separate database)", path)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", fmt.Errorf("sqlite DSN parameters: %w", err)
	}
	if !hasPragma(q, "busy_timeout", "_busy_timeout", "_timeout") {
		q.Set("_busy_timeout", sqliteBusyTimeoutMillis)
	}
	if !hasPragma(q, "journal_mode", "_journal_mode", "_journal") {
		q.Set("_journal_mode", sqliteJournalMode)
	}
	return path + "?" + q.Encode(), nil
}

// hasPragma reports whether q sets the pragma, by a shorthand key or _pragma.
func hasPragma(q url.Values, pragma string, keys ...string) bool {
	for _, k := range keys {
		if q.Has(k) {
			return true
		}
	}
	for _, v := range q["_pragma"] {
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), pragma) {
			return true
		}
	}
	return false
}
