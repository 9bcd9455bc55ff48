// Package sqlenv links the sql backend (runtime/sqlgate: PostgreSQL through
// pgx, MySQL/MariaDB, SQLite through modernc) into gateenv. A program that
// runs with ONCEGATE_BACKEND=sql imports it for its side effect,
//
//	import _ "github.com/oncegate/oncegate/runtime/gateenv/sqlenv"
//
// as a database/sql driver is imported; its init registers Open as "sql".
// A program that does not import it (nor gateenv/allbackends) links none of
// the three drivers.
package sqlenv

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/gateenv/internal/redact"
	"github.com/oncegate/oncegate/runtime/sqlgate"
	"github.com/oncegate/oncegate/sizing"
)

func init() { gateenv.Register("sql", Open) }

// schemes are the ONCEGATE_SQL_DSN prefixes sqlgate.Open accepts.
var schemes = []string{"postgres://", "postgresql://", "mysql://", "sqlite:"}

// Open is the sql backend's gateenv.Opener. It opens ONCEGATE_SQL_DSN with
// sqlgate.Open (the scheme picks the driver), its pool bounded by
// ONCEGATE_SQL_MAX_CONNS (empty: sqlgate.DefaultMaxConns), and creates the
// table when missing. A DSN of another form, or a bound that is not a whole
// number from 1 to 10000, is a *sizing.EnvError naming the variable (the DSN's
// credentials hidden).
func Open(ctx context.Context, getenv func(string) string) (gate.Backend, func() error, error) {
	dsn := strings.TrimSpace(getenv(gateenv.EnvSQLDSN))
	if !slices.ContainsFunc(schemes, func(p string) bool { return len(dsn) > len(p) && strings.EqualFold(dsn[:len(p)], p) }) {
		return nil, nil, &sizing.EnvError{Var: gateenv.EnvSQLDSN, Value: redact.DSN(dsn), Want: sqlgate.AcceptedSchemes}
	}
	maxConns := 0
	if v := strings.TrimSpace(getenv(gateenv.EnvSQLMaxConns)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			return nil, nil, &sizing.EnvError{Var: gateenv.EnvSQLMaxConns, Value: v,
				Want: "a whole number of connections, 1–10000, at most what the database grants the user", Err: err}
		}
		maxConns = n
	}
	s, err := sqlgate.Open(ctx, dsn, &sqlgate.Options{MaxConns: maxConns})
	if err != nil {
		return nil, nil, err
	}
	if err := s.CreateSchema(ctx); err != nil {
		_ = s.Close()
		return nil, nil, fmt.Errorf("create schema: %w", err)
	}
	return s, s.Close, nil
}
