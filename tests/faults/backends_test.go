package faults_test

import (
	"context"
	"database/sql"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx", for dropping tables directly
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/redisgate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// storeTimeout is the client-side bound on one store round trip in the network
// fault tests: Redis read and write timeouts, and the gate's StoreTimeout.
const storeTimeout = 400 * time.Millisecond

// redisDials counts the connections go-redis opened, per address: a reset
// connection is replaced by a new one.
var redisDials sync.Map // address → *atomic.Int64

// dialsTo returns how many connections redis clients opened to addr.
func dialsTo(addr string) int64 {
	n, _ := redisDials.LoadOrStore(addr, new(atomic.Int64))
	return n.(*atomic.Int64).Load()
}

// redisClient returns a go-redis client for addr with short timeouts and the
// library's default retries (MaxRetries 3), closed when the test ends.
func redisClient(t testing.TB, addr string) *redis.Client {
	t.Helper()
	n, _ := redisDials.LoadOrStore(addr, new(atomic.Int64))
	c := redis.NewClient(&redis.Options{
		Addr: addr,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			n.(*atomic.Int64).Add(1)
			ctx, cancel := context.WithTimeout(ctx, storeTimeout)
			defer cancel()
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		ReadTimeout:              storeTimeout,
		WriteTimeout:             storeTimeout,
		PoolSize:                 16,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// redisStore returns a redisgate store on addr under prefix.
func redisStore(t testing.TB, addr, prefix string) *redisgate.Store {
	t.Helper()
	s, err := redisgate.New(redisClient(t, addr), &redisgate.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// deleteRedisPrefix removes every key under prefix from the server at addr.
func deleteRedisPrefix(t testing.TB, addr, prefix string) {
	c := redisClient(t, addr)
	ctx := context.Background()
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		_ = c.Del(ctx, iter.Val()).Err()
	}
}

// postgresVia returns the shared PostgreSQL DSN with its host replaced by addr
// (a proxy), and the DSN itself.
func postgresVia(t testing.TB, addr string) (via, direct string) {
	t.Helper()
	direct = testenv.Postgres(t)
	u, err := url.Parse(direct)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("ONCEGATE_TEST_POSTGRES_DSN must be a postgres:// URL for these tests (got a %d-byte other form)", len(direct))
	}
	if addr == "" {
		return direct, direct
	}
	v := *u
	v.Host = addr
	q := v.Query()
	q.Set("connect_timeout", "2")
	v.RawQuery = q.Encode()
	return v.String(), direct
}

// upstreamOf returns the host:port a postgres:// DSN connects to.
func upstreamOf(t testing.TB, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Fatalf("DSN has no host")
	}
	if u.Port() == "" {
		return u.Hostname() + ":5432"
	}
	return u.Host
}

// sqlStore opens a sqlgate store on dsn with its own table (created now, dropped
// through direct when the test ends), closed when the test ends.
func sqlStore(t testing.TB, dsn, direct, table string) *sqlgate.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := sqlgate.Open(ctx, dsn, &sqlgate.Options{Table: table})
	if err != nil {
		t.Fatalf("sqlgate.Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.CreateSchema(ctx); err != nil {
		t.Fatalf("CreateSchema: %v", err)
	}
	t.Cleanup(func() {
		if strings.HasPrefix(direct, "postgres") {
			dropTable(direct, table)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = s.DB().ExecContext(ctx, "DROP TABLE IF EXISTS "+table)
	})
	return s
}

// dropTable drops table on the PostgreSQL server of dsn, connecting directly.
func dropTable(dsn, table string) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return
	}
	defer db.Close()
	_, _ = db.Exec(`DROP TABLE IF EXISTS "` + table + `"`)
}
