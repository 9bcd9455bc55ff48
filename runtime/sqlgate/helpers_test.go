package sqlgate_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// dialects lists the databases every cross-dialect test runs against.
var dialects = []sqlgate.Dialect{sqlgate.Postgres, sqlgate.MySQL, sqlgate.SQLite}

// openDB opens a pool for d on the test's server (a file in a temp dir for
// SQLite), closed when the test ends. params are extra session settings: for
// PostgreSQL runtime parameters, for MySQL system variables.
func openDB(t testing.TB, d sqlgate.Dialect, params map[string]string) *sql.DB {
	t.Helper()
	return openDBVia(t, d, params, nil)
}

// serverAddr returns the host:port of the test's server for d.
func serverAddr(t testing.TB, d sqlgate.Dialect) string {
	t.Helper()
	if d == sqlgate.MySQL {
		cfg, err := mysql.ParseDSN(testenv.MySQL(t))
		if err != nil {
			t.Fatalf("parse MySQL DSN: %v", err)
		}
		return cfg.Addr
	}
	u, err := url.Parse(testenv.Postgres(t))
	if err != nil {
		t.Fatalf("parse PostgreSQL DSN: %v", err)
	}
	return u.Host
}

// openDBVia is openDB connecting to addr (host:port) instead of the server's
// own address when addr is not nil, to go through a proxy.
func openDBVia(t testing.TB, d sqlgate.Dialect, params map[string]string, addr *string) *sql.DB {
	t.Helper()
	var db *sql.DB
	var err error
	switch d {
	case sqlgate.Postgres:
		dsn := testenv.Postgres(t)
		if addr != nil {
			u, perr := url.Parse(dsn)
			if perr != nil || u.Host == "" {
				t.Fatalf("a proxy needs a URL PostgreSQL DSN: %q, %v", dsn, perr)
			}
			u.Host = *addr
			dsn = u.String()
		}
		for k, v := range params {
			dsn = addQuery(dsn, k, v)
		}
		db, err = sql.Open("pgx", dsn)
	case sqlgate.MySQL:
		cfg, perr := mysql.ParseDSN(testenv.MySQL(t))
		if perr != nil {
			t.Fatalf("parse MySQL DSN: %v", perr)
		}
		if addr != nil {
			cfg.Addr = *addr
		}
		cfg.InterpolateParams = true
		if len(params) > 0 {
			if cfg.Params == nil {
				cfg.Params = map[string]string{}
			}
			for k, v := range params {
				cfg.Params[k] = v
			}
		}
		c, cerr := mysql.NewConnector(cfg)
		if cerr != nil {
			t.Fatalf("MySQL connector: %v", cerr)
		}
		db = sql.OpenDB(c)
	default:
		q := url.Values{"_busy_timeout": {"10000"}, "_journal_mode": {"WAL"}}
		for k, v := range params {
			q.Set(k, v)
		}
		db, err = sql.Open("sqlite", sqliteFile(t)+"?"+q.Encode())
	}
	if err != nil {
		t.Fatalf("open %s: %v", d, err)
	}
	db.SetMaxOpenConns(40)
	db.SetMaxIdleConns(40)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// sqliteFile is a database file in a temp dir of the test.
func sqliteFile(t testing.TB) string { return filepath.Join(t.TempDir(), "gate.db") }

func addQuery(dsn, k, v string) string {
	sep := "?"
	for i := 0; i < len(dsn); i++ {
		if dsn[i] == '?' {
			sep = "&"
		}
	}
	return dsn + sep + k + "=" + v
}

// newStore makes a Store over db on a fresh table, dropped when the test ends.
func newStore(t testing.TB, db *sql.DB, d sqlgate.Dialect) *sqlgate.Store {
	t.Helper()
	s, err := sqlgate.New(db, d, &sqlgate.Options{Table: testenv.UniqueName(t, "og")})
	if err != nil {
		t.Fatalf("sqlgate.New: %v", err)
	}
	if err := s.CreateSchema(context.Background()); err != nil {
		t.Fatalf("CreateSchema: %v", err)
	}
	t.Cleanup(func() { dropTable(t, db, d, s.Table()) })
	return s
}

func dropTable(t testing.TB, db *sql.DB, d sqlgate.Dialect, table string) {
	q := `DROP TABLE IF EXISTS "` + table + `"`
	if d == sqlgate.MySQL {
		q = "DROP TABLE IF EXISTS `" + table + "`"
	}
	if _, err := db.ExecContext(context.Background(), q); err != nil {
		t.Logf("drop %s: %v", table, err)
	}
}

// forEachDialect runs f as a parallel subtest per dialect.
func forEachDialect(t *testing.T, f func(t *testing.T, d sqlgate.Dialect)) {
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			f(t, d)
		})
	}
}

// newToken returns a random claim token.
func newToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// claim claims key with lease and fails the test unless it wins.
func claim(t testing.TB, s *sqlgate.Store, key string, lease time.Duration) gate.Record {
	t.Helper()
	res, err := s.Claim(context.Background(), gate.ClaimRequest{Key: key, Token: newToken(), Owner: "test", Lease: lease, TTL: time.Hour})
	if err != nil || res.Status != gate.Won {
		t.Fatalf("Claim(%.40q) = %v, %v; want won", key, res.Status, err)
	}
	return res.Record
}
