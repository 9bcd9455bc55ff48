package growth

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/bench/stores"
	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gate"
)

// store is a seeded backend, kept for the whole test binary.
type store struct {
	*stores.Store
	reset func() error        // delete the benchmark's own keys
	count func() (int, error) // records held
}

var cache struct {
	mu     sync.Mutex
	stores map[string]*store
	dir    string
}

// seeded returns case name's store (kind, with SQLite DSN parameters params)
// holding n seeded records with keys in order ("seq" or "rand"), seeding it on
// first use in this test binary.
func seeded(b *testing.B, name string, kind stores.Kind, order, params string, n int) *store {
	b.Helper()
	cache.mu.Lock()
	defer cache.mu.Unlock()
	id := fmt.Sprintf("%s/%d", name, n)
	if s, ok := cache.stores[id]; ok {
		return s
	}
	if cache.stores == nil {
		cache.stores = map[string]*store{}
	}
	s, err := open(b, kind, order, params, n, len(cache.stores))
	if err != nil {
		b.Fatalf("seed %s with %d records: %v", kind, n, err)
	}
	cache.stores[id] = s
	return s
}

// closeSeeded closes every seeded store, dropping its records.
func closeSeeded() error {
	cache.mu.Lock()
	defer cache.mu.Unlock()
	var errs []error
	for _, s := range cache.stores {
		errs = append(errs, s.Close())
	}
	cache.stores = nil
	if cache.dir != "" {
		errs = append(errs, os.RemoveAll(cache.dir))
	}
	return errors.Join(errs...)
}

func open(b *testing.B, kind stores.Kind, order, params string, n, seq int) (*store, error) {
	ctx := context.Background()
	cfg := stores.Config{Name: testenv.UniqueName(b, "growth"), Drop: true}
	switch kind {
	case stores.Redis:
		// Each size in its own database: a Redis database is one hash table,
		// so the 1k figure must not share it with the million.
		cfg.Name = "oncegate_bench_growth"
		cfg.DSN = fmt.Sprintf("redis://%s/%d", testenv.Redis(b), redisDB(n))
		if order != "rand" {
			return nil, fmt.Errorf("redis: key order %q is not benchmarked (a hash table has no order)", order)
		}
	case stores.Postgres:
		cfg.DSN = withParam(testenv.Postgres(b), "synchronous_commit=off")
	case stores.SQLite:
		if cache.dir == "" {
			d, err := os.MkdirTemp("", "oncegate-growth-")
			if err != nil {
				return nil, err
			}
			cache.dir = d
		}
		cfg.DSN = filepath.Join(cache.dir, fmt.Sprintf("records-%d.db", seq)) + "?_pragma=synchronous(NORMAL)"
		if params != "" {
			cfg.DSN += "&" + params
		}
	}
	st, err := stores.Open(ctx, kind, cfg)
	if err != nil {
		return nil, err
	}
	s := &store{Store: st}
	if kind == stores.Redis {
		err = seedRedis(ctx, s, n)
	} else {
		err = seedSQL(ctx, s, order, n)
	}
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return s, nil
}

func redisDB(n int) int {
	if n >= 1_000_000 {
		return 15
	}
	return 14
}

func withParam(dsn, p string) string {
	if strings.Contains(dsn, "?") {
		return dsn + "&" + p
	}
	return dsn + "?" + p
}

// writeTemplate makes the store write one done record, the one seeding copies.
func writeTemplate(ctx context.Context, s *store) error {
	res, err := s.Backend.Claim(ctx, gate.ClaimRequest{Key: template, Token: "seed", Owner: "bench/growth", Lease: lease, TTL: ttl})
	if err != nil || res.Status != gate.Won {
		return fmt.Errorf("claim template: %v %v", res.Status, err)
	}
	if ok, err := s.Backend.Complete(ctx, gate.Completion{Key: template, Fence: res.Record.Fence, TTL: ttl}); err != nil || !ok {
		return fmt.Errorf("complete template: %v %v", ok, err)
	}
	return nil
}

// seedScript copies the template's value (a redisgate record is one string) and
// expiry to keys prefix .. sha1hex(i) for i in [from, to].
var seedScript = redis.NewScript(`
local prefix, from, to, pexp, v = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], ARGV[5]
for i = from, to do
  redis.call('SET', prefix .. redis.sha1hex(tostring(i)), v, 'PXAT', pexp)
end
return to - from + 1`)

func seedRedis(ctx context.Context, s *store, n int) error {
	c := s.Redis
	prefix := "oncegate_bench_growth:"
	// A crashed earlier run may have left keys; the database must hold ours only.
	if err := deleteMatching(ctx, c, prefix+"*"); err != nil {
		return err
	}
	if size, err := c.DBSize(ctx).Result(); err != nil || size != 0 {
		return fmt.Errorf("redis database %d holds %d keys of someone else (%v); the growth benchmark needs it empty", redisDB(n), size, err)
	}
	if err := writeTemplate(ctx, s); err != nil {
		return err
	}
	v, err := c.Get(ctx, prefix+template).Result()
	if err != nil {
		return err
	}
	pexp, err := c.PExpireTime(ctx, prefix+template).Result()
	if err != nil {
		return err
	}
	args := []any{prefix + seedPrefix, 0, 0, pexp.Milliseconds(), v}
	const batch = 50_000
	for from := 1; from <= n; from += batch {
		args[1], args[2] = from, min(from+batch-1, n)
		if err := seedScript.Run(ctx, c, nil, args...).Err(); err != nil {
			return fmt.Errorf("seed keys %d…: %w", from, err)
		}
	}
	s.reset = func() error { return deleteMatching(context.Background(), c, prefix+newPrefix+"*") }
	s.count = func() (int, error) {
		n, err := c.DBSize(context.Background()).Result()
		return int(n), err
	}
	return nil
}

func deleteMatching(ctx context.Context, c *redis.Client, pattern string) error {
	iter := c.Scan(ctx, 0, pattern, 10_000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return err
	}
	for len(keys) > 0 {
		k := keys[:min(1000, len(keys))]
		keys = keys[len(k):]
		if err := c.Unlink(ctx, k...).Err(); err != nil {
			return err
		}
	}
	return nil
}

// columns are sqlgate's columns (sqlgate.Store.DDL), key first.
const columns = `raw_key, state, fence, lease_expiry, done_at, expires_at, claim_token, owner, fingerprint, result`

func seedSQL(ctx context.Context, s *store, order string, n int) error {
	db, t := s.SQL.DB(), `"`+s.SQL.Table()+`"`
	if err := writeTemplate(ctx, s); err != nil {
		return err
	}
	// Keys: "seed:" and a 16-digit number ("seq", inserted in order) or 32
	// hex digits of a hash or random bytes ("rand").
	var seed string
	if s.Kind == stores.Postgres {
		key := `lpad(g::text, 16, '0')`
		if order == "rand" {
			key = `md5(g::text)`
		}
		seed = `INSERT INTO ` + t + ` ("key", ` + columns + `)
SELECT '` + seedPrefix + `' || ` + key + `, ` + columns + `
FROM ` + t + `, generate_series(1, $1) AS g WHERE "key" = '` + template + `' ORDER BY g`
	} else {
		key := `printf('%016d', i)`
		if order == "rand" {
			key = `lower(hex(randomblob(16)))`
		}
		seed = `WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ?)
INSERT INTO ` + t + ` ("key", ` + columns + `)
SELECT '` + seedPrefix + `' || ` + key + `, ` + columns + `
FROM g, ` + t + ` WHERE "key" = '` + template + `'`
	}
	if _, err := db.ExecContext(ctx, seed, n); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	// Settle what the bulk insert left for later, so the benchmark does not
	// pay for it: statistics, the visibility map and a checkpoint on
	// PostgreSQL; statistics and the WAL's copy into the database on SQLite.
	settle := []string{"ANALYZE " + t, "PRAGMA wal_checkpoint(TRUNCATE)"}
	if s.Kind == stores.Postgres {
		settle = []string{"VACUUM ANALYZE " + t, "CHECKPOINT"}
	}
	for _, q := range settle {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	del := `DELETE FROM ` + t + ` WHERE "key" >= '` + newPrefix + `' AND "key" < '` + newPrefix[:len(newPrefix)-1] + `;'`
	reset := []string{del}
	if s.Kind == stores.Postgres {
		reset = append(reset, "VACUUM "+t) // the deleted rows' index entries too
	}
	s.reset = func() error {
		for _, q := range reset {
			if _, err := db.ExecContext(context.Background(), q); err != nil {
				return err
			}
		}
		return nil
	}
	s.count = func() (int, error) {
		var n int
		err := db.QueryRowContext(context.Background(), `SELECT count(*) FROM `+t).Scan(&n)
		return n, err
	}
	return nil
}
