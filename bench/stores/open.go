package stores

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"cloud.google.com/go/datastore"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	_ "modernc.org/sqlite" // registers driver "sqlite"

	"github.com/oncegate/oncegate/bench/roundtrip"
	"github.com/oncegate/oncegate/internal/dsfake"
	"github.com/oncegate/oncegate/runtime/datastoregate"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/redisgate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// Config says where a store lives and how to count it.
type Config struct {
	// DSN locates the server: a postgres:// URL for PostgreSQL (pgx's URL
	// parameters apply; unknown ones, such as synchronous_commit=off, become
	// session settings), a go-sql-driver DSN (user@tcp(host:port)/db) for
	// MySQL/MariaDB, a file path for SQLite (with modernc.org/sqlite's query
	// parameters, if any, after a '?'), host:port or a redis:// URL (which may
	// pick a database number) for Redis. Unused for memory and for Datastore,
	// whose fake runs in process.
	DSN string
	// Name keeps this store's records apart on a shared server: the SQL table,
	// the Redis key prefix (Name + ":") and the Datastore kind. It must be a
	// plain identifier (letters, digits, underscores). Required except for
	// memory.
	Name string
	// Wire, when set, also counts request–response exchanges on every network
	// connection to PostgreSQL, MySQL or Redis (roundtrip.NetTrips).
	Wire bool
	// MaxConns caps the SQL pool or the Redis pool; zero leaves the driver's
	// default.
	MaxConns int
	// Drop, when set, makes Close remove the store's records (DROP TABLE,
	// UNLINK of the prefix's keys); a SQLite file is left to its owner.
	Drop bool
}

// Store is an open backend with its counters.
type Store struct {
	Kind Kind
	// Backend is the store the gate uses.
	Backend gate.Backend
	// Counts holds the counters below the store (roundtrip's SQL*, Redis* and
	// Net* names); the Datastore fake keeps its own, read through Trips.
	Counts *roundtrip.Counter
	// SQL, Redis, Fake and DS are set for their kinds.
	SQL   *sqlgate.Store
	Redis *redis.Client
	Fake  *dsfake.Server
	DS    *datastore.Client

	probe   func(context.Context) error
	closers []func() error
}

// Open opens a backend of kind k as cfg says and creates its table when it has
// one. The caller closes it.
func Open(ctx context.Context, k Kind, cfg Config) (*Store, error) {
	s := &Store{Kind: k, Counts: new(roundtrip.Counter)}
	var err error
	switch k {
	case Memory:
		s.Backend = memgate.New(nil)
		s.probe = func(context.Context) error { return nil }
	case SQLite, Postgres, MySQL:
		err = s.openSQL(ctx, k, cfg)
	case Redis:
		err = s.openRedis(cfg)
	case Datastore:
		err = s.openDatastore(ctx, cfg)
	default:
		_, err = ParseKind(string(k))
	}
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("open %s: %w", k, err)
	}
	return s, nil
}

// Trips returns the round trips counted since the last ResetCounts (see
// Kind.Trips). The Datastore fake's own count, Fake.Total, should agree.
func (s *Store) Trips() int64 { return s.Kind.Trips(s.Counts) }

// WireTrips returns the request–response exchanges counted on the network
// connections (Config.Wire) since the last ResetCounts.
func (s *Store) WireTrips() int64 { return s.Counts.Get(roundtrip.NetTrips) }

// ResetCounts zeroes every counter.
func (s *Store) ResetCounts() {
	s.Counts.Reset()
	if s.Fake != nil {
		s.Fake.ResetCounts()
	}
}

// Probe makes one minimal round trip to the store (Redis PING, SQL SELECT 1, a
// Datastore Lookup of an absent key; nothing for memory).
func (s *Store) Probe(ctx context.Context) error { return s.probe(ctx) }

// Close closes everything Open opened, dropping the records when Config.Drop
// was set, and returns the errors joined.
func (s *Store) Close() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i]())
	}
	s.closers = nil
	return errors.Join(errs...)
}

func (s *Store) onClose(f func() error) { s.closers = append(s.closers, f) }

func (s *Store) openSQL(ctx context.Context, k Kind, cfg Config) error {
	conn, d, err := connector(k, cfg, s.Counts)
	if err != nil {
		return err
	}
	db := sql.OpenDB(roundtrip.Connector{Inner: conn, C: s.Counts})
	s.onClose(db.Close)
	if cfg.MaxConns > 0 {
		db.SetMaxOpenConns(cfg.MaxConns)
		db.SetMaxIdleConns(cfg.MaxConns)
	}
	st, err := sqlgate.New(db, d, &sqlgate.Options{Table: cfg.Name})
	if err != nil {
		return err
	}
	s.onClose(st.Close)
	if err := st.CreateSchema(ctx); err != nil {
		return err
	}
	if cfg.Drop {
		drop := "DROP TABLE IF EXISTS " + quote(d, cfg.Name)
		s.onClose(func() error {
			_, err := db.ExecContext(context.Background(), drop)
			return err
		})
	}
	s.SQL, s.Backend = st, st
	s.probe = func(ctx context.Context) error {
		var one int
		return db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
	}
	return nil
}

func quote(d sqlgate.Dialect, ident string) string {
	if d == sqlgate.MySQL {
		return "`" + ident + "`"
	}
	return `"` + ident + `"`
}

// connector returns the driver connector for a SQL kind, dialling through the
// wire counter when cfg.Wire is set.
func connector(k Kind, cfg Config, c *roundtrip.Counter) (driver.Connector, sqlgate.Dialect, error) {
	switch k {
	case Postgres:
		pc, err := pgx.ParseConfig(cfg.DSN)
		if err != nil {
			return nil, 0, fmt.Errorf("postgres DSN: %w", err)
		}
		if cfg.Wire {
			pc.DialFunc = pgconn.DialFunc(roundtrip.Dial(roundtrip.DialFunc(pc.DialFunc), c))
		}
		return stdlib.GetConnector(*pc), sqlgate.Postgres, nil
	case MySQL:
		mc, err := mysql.ParseDSN(cfg.DSN)
		if err != nil {
			return nil, 0, fmt.Errorf("mysql DSN: %w", err)
		}
		// As sqlgate.Open does: a statement with arguments is one round trip.
		mc.InterpolateParams = true
		if cfg.Wire {
			mc.DialFunc = roundtrip.Dial(mc.DialFunc, c)
		}
		conn, err := mysql.NewConnector(mc)
		return conn, sqlgate.MySQL, err
	}
	// SQLite, with the settings sqlgate.Open applies: WAL and a busy timeout.
	if cfg.DSN == "" {
		return nil, 0, errors.New("sqlite: Config.DSN must be a file path")
	}
	path, query, _ := strings.Cut(cfg.DSN, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, 0, fmt.Errorf("sqlite parameters: %w", err)
	}
	for k, v := range map[string]string{"_busy_timeout": "10000", "_journal_mode": "WAL"} {
		if !q.Has(k) {
			q.Set(k, v)
		}
	}
	name := path + "?" + q.Encode()
	db, err := sql.Open("sqlite", name)
	if err != nil {
		return nil, 0, err
	}
	drv := db.Driver()
	_ = db.Close()
	conn, err := roundtrip.DriverConnector(drv, name)
	return conn, sqlgate.SQLite, err
}

func (s *Store) openRedis(cfg Config) error {
	o := &redis.Options{Addr: cfg.DSN}
	if strings.HasPrefix(cfg.DSN, "redis://") {
		var err error
		if o, err = redis.ParseURL(cfg.DSN); err != nil {
			return fmt.Errorf("redis URL: %w", err)
		}
	}
	o.DisableIdentity = true
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	o.PoolSize = cfg.MaxConns
	if cfg.Wire {
		o.Dialer = roundtrip.Dial(nil, s.Counts)
	}
	c := redis.NewClient(o)
	s.onClose(c.Close)
	c.AddHook(roundtrip.Hook{C: s.Counts})
	st, err := redisgate.New(c, &redisgate.Options{Prefix: cfg.Name + ":"})
	if err != nil {
		return err
	}
	if cfg.Drop {
		s.onClose(func() error { return deletePrefix(c, st.Prefix()) })
	}
	s.Redis, s.Backend = c, st
	s.probe = func(ctx context.Context) error { return c.Ping(ctx).Err() }
	return nil
}

// deletePrefix unlinks every key under prefix.
func deletePrefix(c *redis.Client, prefix string) error {
	ctx := context.Background()
	iter := c.Scan(ctx, 0, prefix+"*", 10000).Iterator()
	var batch []string
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 1000 {
			if err := c.Unlink(ctx, batch...).Err(); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		if err := c.Unlink(ctx, batch...).Err(); err != nil {
			return err
		}
	}
	return iter.Err()
}

func (s *Store) openDatastore(ctx context.Context, cfg Config) error {
	f, err := dsfake.New()
	if err != nil {
		return err
	}
	s.Fake = f
	s.onClose(func() error { f.Close(); return nil })
	opts := append(f.ClientOptions(),
		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(roundtrip.UnaryInterceptor(s.Counts))))
	c, err := datastore.NewClientWithDatabase(ctx, dsfake.Project, "", opts...)
	if err != nil {
		return err
	}
	s.onClose(c.Close)
	st, err := datastoregate.New(c, &datastoregate.Options{Kind: cfg.Name})
	if err != nil {
		return err
	}
	s.DS, s.Backend = c, st
	absent := datastore.NameKey(cfg.Name+"Probe", "absent", nil)
	s.probe = func(ctx context.Context) error {
		var v struct{}
		if err := c.Get(ctx, absent, &v); !errors.Is(err, datastore.ErrNoSuchEntity) {
			return err
		}
		return nil
	}
	return nil
}
