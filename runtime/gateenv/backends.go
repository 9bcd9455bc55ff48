package gateenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/datastore"
	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/runtime/datastoregate"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/redisgate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
	"github.com/oncegate/oncegate/sizing"
)

// Opener opens one backend from the environment (read through getenv). It
// returns the backend and a func releasing its client (nil when there is none).
// A missing or malformed variable should be a *sizing.EnvError naming it.
type Opener func(ctx context.Context, getenv func(string) string) (gate.Backend, func() error, error)

// Backends returns a fresh registry of the built-in backends: "memory", "sql",
// "redis" and "datastore". Add entries to it to offer more.
func Backends() map[string]Opener {
	return map[string]Opener{
		"memory":    OpenMemory,
		"sql":       OpenSQL,
		"redis":     OpenRedis,
		"datastore": OpenDatastore,
	}
}

func names(m map[string]Opener) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// OpenMemory opens a memgate store. It protects one process only: records
// vanish on restart and other instances do not see them.
func OpenMemory(context.Context, func(string) string) (gate.Backend, func() error, error) {
	return memgate.New(nil), nil, nil
}

// sqlSchemes are the ONCEGATE_SQL_DSN prefixes sqlgate.Open accepts.
var sqlSchemes = []string{"postgres://", "postgresql://", "mysql://", "sqlite:"}

// EnvSQLMaxConns bounds the SQL pool (sqlgate.Options.MaxConns): a whole number
// of connections, at most what the database grants the user. Empty:
// sqlgate.DefaultMaxConns.
const EnvSQLMaxConns = "ONCEGATE_SQL_MAX_CONNS"

// OpenSQL opens ONCEGATE_SQL_DSN with sqlgate.Open (the scheme picks the
// driver), its pool bounded by ONCEGATE_SQL_MAX_CONNS, and creates the table
// when missing.
func OpenSQL(ctx context.Context, getenv func(string) string) (gate.Backend, func() error, error) {
	dsn := strings.TrimSpace(getenv(EnvSQLDSN))
	if !slices.ContainsFunc(sqlSchemes, func(p string) bool { return len(dsn) > len(p) && strings.EqualFold(dsn[:len(p)], p) }) {
		return nil, nil, &sizing.EnvError{Var: EnvSQLDSN, Value: redactDSN(dsn), Want: sqlgate.AcceptedSchemes}
	}
	maxConns := 0
	if v := strings.TrimSpace(getenv(EnvSQLMaxConns)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			return nil, nil, &sizing.EnvError{Var: EnvSQLMaxConns, Value: v,
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

// redactDSN hides the credentials in a DSN or address quoted by an error:
// everything before the last '@' (after a leading "scheme://"), since a
// password may hold ',', '@', ':' or '/' and the parts of a host list cannot be
// told from the pieces of such a password, so "h1:1,u:p,w@h2:2" shows as
// "xxxxx@h2:2". The user name before the first ':' is kept when it can only be
// one ("scheme://u:xxxxx@h"; "u:xxxxx@h" when u holds no '@' and no ','
// comes before the '@'), and the value of every password= parameter is hidden
// too.
func redactDSN(dsn string) string {
	scheme, rest := "", dsn
	if m := urlScheme.FindString(dsn); m != "" {
		scheme, rest = m, dsn[len(m):]
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		info := "xxxxx"
		if user, _, hasPass := strings.Cut(rest[:at], ":"); hasPass && (scheme != "" || !strings.Contains(rest[:at], ",") && !strings.Contains(user, "@")) {
			info = user + ":xxxxx"
		}
		rest = info + rest[at:]
	}
	return scheme + redactPasswordParam(rest)
}

// urlScheme matches a URL's leading "scheme://" (RFC 3986 section 3.1).
var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// redactPasswordParam replaces the value of each password= parameter in s.
func redactPasswordParam(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(strings.ToLower(s), "password=")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+len("password=")] + "xxxxx")
		s = s[i+len("password="):]
		if j := strings.IndexAny(s, "&; "); j >= 0 {
			s = s[j:]
		} else {
			s = ""
		}
	}
}

const redisForm = "host:port, a comma-separated list of them (Redis Cluster), or a redis:// or rediss:// URL"

// EnvRedisAllowEviction set to 1 opens Redis even when a server may evict
// records (redisgate.Options.AllowEviction); default 0, refused.
const EnvRedisAllowEviction = "ONCEGATE_REDIS_ALLOW_EVICTION"

// OpenRedis connects to ONCEGATE_REDIS_ADDR: one host:port (a single server), a
// comma-separated list (a Cluster, through redis.NewUniversalClient), or a
// redis:// or rediss:// URL (redis.ParseURL: password, database, TLS). It pings
// the server so a wrong address fails at start-up, and refuses a server that
// may evict records (redisgate.Open) unless ONCEGATE_REDIS_ALLOW_EVICTION=1.
func OpenRedis(ctx context.Context, getenv func(string) string) (gate.Backend, func() error, error) {
	v := strings.TrimSpace(getenv(EnvRedisAddr))
	allow, err := parseBool(EnvRedisAllowEviction, getenv(EnvRedisAllowEviction),
		"1 (accept a server that may evict records, and so duplicates) or 0")
	if err != nil {
		return nil, nil, err
	}
	var c redis.UniversalClient
	if strings.HasPrefix(v, "redis://") || strings.HasPrefix(v, "rediss://") {
		opt, err := redis.ParseURL(v)
		if err != nil {
			return nil, nil, &sizing.EnvError{Var: EnvRedisAddr, Value: redactDSN(v), Want: redisForm, Err: err}
		}
		c = redis.NewClient(opt)
	} else {
		addrs, err := redisAddrs(v)
		if err != nil {
			return nil, nil, err
		}
		c = redis.NewUniversalClient(&redis.UniversalOptions{Addrs: addrs})
	}
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, nil, fmt.Errorf("ping %s: %w", redactDSN(v), err)
	}
	s, err := redisgate.Open(ctx, c, &redisgate.Options{AllowEviction: allow})
	if errors.Is(err, redisgate.ErrEviction) {
		err = fmt.Errorf("%w (or %s=1)", err, EnvRedisAllowEviction)
	}
	if err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	return s, c.Close, nil
}

// parseBool reads an optional boolean variable; empty means false.
func parseBool(name, v, want string) (bool, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, &sizing.EnvError{Var: name, Value: v, Want: want, Err: err}
	}
	return b, nil
}

func redisAddrs(v string) ([]string, error) {
	if v == "" {
		return nil, &sizing.EnvError{Var: EnvRedisAddr, Want: redisForm}
	}
	var addrs []string
	for a := range strings.SplitSeq(v, ",") {
		a = strings.TrimSpace(a)
		host, port, err := net.SplitHostPort(a)
		if err == nil {
			if n, perr := strconv.Atoi(port); perr != nil || n < 1 || n > 65535 || host == "" || strings.ContainsAny(host, " \t\r\n\x00") {
				err = errors.New("invalid host or port")
			}
		}
		if err != nil {
			return nil, &sizing.EnvError{Var: EnvRedisAddr, Value: redactDSN(v), Want: redisForm, Err: err}
		}
		addrs = append(addrs, a)
	}
	return addrs, nil
}

// EnvDatastoreMaxClockSkew is datastoregate.Options.MaxClockSkew, a Go duration
// (empty: datastoregate.DefaultMaxClockSkew).
const EnvDatastoreMaxClockSkew = "ONCEGATE_DATASTORE_MAX_CLOCK_SKEW"

// OpenDatastore opens Firestore in Datastore mode for GOOGLE_CLOUD_PROJECT and
// ONCEGATE_DATASTORE_DATABASE (empty: the default database) with
// datastore.NewClientWithDatabase, storing records under
// ONCEGATE_DATASTORE_KIND (empty: datastoregate.DefaultKind), leases judged
// with a margin of ONCEGATE_DATASTORE_MAX_CLOCK_SKEW (empty:
// datastoregate.DefaultMaxClockSkew). The client honours DATASTORE_EMULATOR_HOST.
func OpenDatastore(ctx context.Context, getenv func(string) string) (gate.Backend, func() error, error) {
	project := strings.TrimSpace(getenv(EnvProject))
	if project == "" {
		return nil, nil, &sizing.EnvError{Var: EnvProject, Want: "the Google Cloud project id that holds the Datastore database"}
	}
	db := strings.TrimSpace(getenv(EnvDatastoreDatabase))
	if db == "(default)" { // the console's name for it; the API wants the empty id
		db = ""
	}
	skew := datastoregate.DefaultMaxClockSkew
	if v := strings.TrimSpace(getenv(EnvDatastoreMaxClockSkew)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > time.Minute {
			return nil, nil, &sizing.EnvError{Var: EnvDatastoreMaxClockSkew, Value: v,
				Want: "a Go duration from 0s to 1m, the largest difference between two instances' clocks", Err: err}
		}
		skew = d
	}
	c, err := datastore.NewClientWithDatabase(ctx, project, db)
	if err != nil {
		return nil, nil, fmt.Errorf("new client: %w", err)
	}
	s, err := datastoregate.New(c, &datastoregate.Options{Kind: strings.TrimSpace(getenv(EnvDatastoreKind)), MaxClockSkew: skew})
	if err != nil {
		_ = c.Close()
		return nil, nil, &sizing.EnvError{Var: EnvDatastoreKind, Value: getenv(EnvDatastoreKind),
			Want: "an entity kind of at most 1,500 bytes, not of the reserved form __*__", Err: err}
	}
	return s, c.Close, nil
}
