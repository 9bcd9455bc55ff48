package sqlgate

import (
	"strconv"
	"strings"
)

// Dialect names the SQL database a Store talks to. It selects the statements, the
// server-clock expression and the identifier quoting.
type Dialect int

// The supported dialects.
const (
	// Postgres is PostgreSQL 12 or later, through pgx's database/sql driver
	// ("github.com/jackc/pgx/v5/stdlib", driver name "pgx") or any driver that
	// accepts $n placeholders.
	Postgres Dialect = iota + 1
	// MySQL is MySQL 8 or MariaDB 10.5 or later, through go-sql-driver/mysql
	// (driver name "mysql"), with InnoDB tables. Its clock is a statement's start
	// time: the claim reads it after taking the row lock (see Store.Claim), but
	// Complete, Renew and the other single statements that wait for a row lock
	// date their times from before the wait (at most as long as a concurrent
	// claim's short transaction).
	MySQL
	// SQLite is SQLite 3.37 or later (STRICT tables, upsert with RETURNING),
	// through modernc.org/sqlite (driver name "sqlite"). Open sets WAL mode and a
	// busy timeout on every connection; set them yourself on a pool you configure.
	SQLite
)

// String returns the dialect's lower-case name, or "invalid".
func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "postgres"
	case MySQL:
		return "mysql"
	case SQLite:
		return "sqlite"
	}
	return "invalid"
}

func (d Dialect) valid() bool { return d >= Postgres && d <= SQLite }

// nowMillis is the dialect's expression for the server's current time in UTC
// epoch milliseconds, evaluated when the statement runs.
//
//   - PostgreSQL: clock_timestamp() is the wall clock when it is evaluated, so a
//     statement that waited on a row lock uses the time after the wait (now() is
//     the transaction start), except for the VALUES of an INSERT, computed before
//     the INSERT waits on an uncommitted row of the same key (see freshen). A timestamptz is an absolute instant; extract(epoch)
//     does not depend on the session's TimeZone.
//   - MySQL/MariaDB: UTC_TIMESTAMP(6) is the statement's start time in UTC
//     whatever time_zone the session has, and TIMESTAMPDIFF between two DATETIME
//     values is plain calendar arithmetic. (UNIX_TIMESTAMP(NOW()) would go through
//     the session time zone and is ambiguous in a DST fall-back hour.)
//   - SQLite: julianday('now') is UTC, fixed for the whole statement; SQLite keeps
//     it as whole milliseconds, so rounding recovers them exactly.
func (d Dialect) nowMillis() string {
	switch d {
	case Postgres:
		return "(floor(extract(epoch from clock_timestamp()) * 1000)::bigint)"
	case MySQL:
		return "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)"
	default:
		return "CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)"
	}
}

// quote quotes a validated identifier.
func (d Dialect) quote(ident string) string {
	if d == MySQL {
		return "`" + ident + "`"
	}
	return `"` + ident + `"`
}

// greatest is the dialect's two-argument maximum function.
func (d Dialect) greatest() string {
	if d == SQLite {
		return "max"
	}
	return "GREATEST"
}

// stmt is a statement ready for one dialect: the SQL text and, for dialects with
// positional placeholders only (MySQL), the order in which to pass the template's
// $n arguments.
type stmt struct {
	text  string
	order []int // nil: pass the arguments as given
}

// args returns the arguments in the order the statement's placeholders want.
func (s stmt) args(in ...any) []any {
	if s.order == nil {
		return in
	}
	out := make([]any, len(s.order))
	for i, n := range s.order {
		out[i] = in[n-1]
	}
	return out
}

// render expands a statement template for d. A template uses $1…$n placeholders
// (each may repeat) and the markers {T} (the quoted table), {K} (the quoted key
// column), {NOW} (the server clock in epoch milliseconds), {MAX} (gate.MaxFence),
// {GREATEST}, and {EXPIRED} or {EXPIRED_R} (the record, unqualified or as alias r,
// has passed expires_at: memgate's expired). Templates hold no other '$'.
func (d Dialect) render(tmpl, table string) stmt {
	text := strings.NewReplacer(
		"{EXPIRED_R}", "(r.state <> 'unknown' AND r.expires_at IS NOT NULL AND r.expires_at <= {NOW})",
		"{EXPIRED}", "(state <> 'unknown' AND expires_at IS NOT NULL AND expires_at <= {NOW})",
	).Replace(tmpl)
	text = strings.NewReplacer(
		"{T}", d.quote(table),
		"{K}", d.quote("key"),
		"{NOW}", d.nowMillis(),
		"{MAX}", strconv.FormatInt(maxFence, 10),
		"{GREATEST}", d.greatest(),
	).Replace(text)
	return d.placeholders(text)
}

// placeholders rewrites $n into the dialect's placeholder syntax.
func (d Dialect) placeholders(text string) stmt {
	if d == Postgres {
		return stmt{text: text}
	}
	var b strings.Builder
	var order []int
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '$' {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(text) && text[j] >= '0' && text[j] <= '9' {
			j++
		}
		n, _ := strconv.Atoi(text[i+1 : j])
		if d == SQLite {
			b.WriteString("?" + text[i+1:j])
		} else {
			b.WriteByte('?')
			order = append(order, n)
		}
		i = j - 1
	}
	if d == MySQL && order == nil {
		order = []int{}
	}
	return stmt{text: b.String(), order: order}
}
