package gateenv_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/dsfake"
	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/datastoregate"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/redisgate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
	"github.com/oncegate/oncegate/sizing"
)

// roundTrip opens the configured backend, runs one Lock and a duplicate.
func roundTrip(t *testing.T, e env) *gateenv.Config {
	t.Helper()
	c, err := gateenv.New(context.Background(), &gateenv.Options{Getenv: e.Get})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	g, err := c.NewGate()
	if err != nil {
		t.Fatal(err)
	}
	key := testenv.UniqueName(t, "k")
	ctx := context.Background()
	if err := g.Lock(ctx, key, func(context.Context, gate.Claim) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := g.Lock(ctx, key, func(context.Context, gate.Claim) error { return nil }); !errors.Is(err, gate.ErrDuplicate) {
		t.Fatalf("second lock: %v", err)
	}
	return c
}

func TestMemory(t *testing.T) {
	c := roundTrip(t, valid.With("ONCEGATE_BACKEND", "memory"))
	if _, ok := c.Backend.(*memgate.Store); !ok {
		t.Errorf("backend %T", c.Backend)
	}
}

func TestSQLite(t *testing.T) {
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "oncegate.db")
	c := roundTrip(t, valid.With("ONCEGATE_BACKEND", "sql", "ONCEGATE_SQL_DSN", dsn))
	s, ok := c.Backend.(*sqlgate.Store)
	if !ok || s.Dialect() != sqlgate.SQLite {
		t.Fatalf("backend %T", c.Backend)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.DB().Ping(); err == nil {
		t.Error("Close left the pool open")
	}
}

func TestPostgres(t *testing.T) {
	dsn := testenv.Postgres(t)
	if !strings.HasPrefix(dsn, "postgres") {
		testenv.Missing(t, "a postgres:// URL for ONCEGATE_SQL_DSN: ONCEGATE_TEST_POSTGRES_DSN is in keyword form")
	}
	roundTrip(t, valid.With("ONCEGATE_BACKEND", "sql", "ONCEGATE_SQL_DSN", dsn))
}

func TestSQLDSNRefused(t *testing.T) {
	for _, dsn := range []string{"", "oracle://u:hunter2@h/db", "host=x user=y"} {
		_, err := gateenv.New(context.Background(), &gateenv.Options{Getenv: valid.With("ONCEGATE_BACKEND", "sql", "ONCEGATE_SQL_DSN", dsn).Get})
		var ee *sizing.EnvError
		if !errors.As(err, &ee) || ee.Var != gateenv.EnvSQLDSN || !strings.Contains(err.Error(), "sqlite:") {
			t.Errorf("%q: err = %v", dsn, err)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("password in error: %v", err)
		}
	}
}

func TestRedis(t *testing.T) {
	addr := testenv.Redis(t)
	c := roundTrip(t, valid.With("ONCEGATE_BACKEND", "redis", "ONCEGATE_REDIS_ADDR", addr))
	s, ok := c.Backend.(*redisgate.Store)
	if !ok {
		t.Fatalf("backend %T", c.Backend)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(context.Background(), gate.ClaimRequest{Key: "k", Token: "t", Lease: time.Second, TTL: time.Second}); err == nil {
		t.Error("Close left the client open")
	}
	roundTrip(t, valid.With("ONCEGATE_BACKEND", "redis", "ONCEGATE_REDIS_ADDR", "redis://"+addr+"/0"))
}

func TestRedisAddrRefused(t *testing.T) {
	for _, v := range []string{"", "localhost", "host:port", "a:1,,b:2", ":6379", "redis://:bad:url:x/zz"} {
		_, err := gateenv.New(context.Background(), &gateenv.Options{Getenv: valid.With("ONCEGATE_BACKEND", "redis", "ONCEGATE_REDIS_ADDR", v).Get})
		var ee *sizing.EnvError
		if !errors.As(err, &ee) || ee.Var != gateenv.EnvRedisAddr || !strings.Contains(err.Error(), "comma-separated") {
			t.Errorf("%q: err = %v", v, err)
		}
	}
}

func TestDatastore(t *testing.T) {
	srv := dsfake.Start(t)
	t.Setenv("DATASTORE_EMULATOR_HOST", srv.Addr())
	c := roundTrip(t, valid.With("ONCEGATE_BACKEND", "datastore", "GOOGLE_CLOUD_PROJECT", dsfake.Project,
		"ONCEGATE_DATASTORE_KIND", "OrderRecord"))
	if _, ok := c.Backend.(*datastoregate.Store); !ok {
		t.Errorf("backend %T", c.Backend)
	}
	if srv.Count("Commit") == 0 {
		t.Error("the fake saw no commit")
	}
	// "(default)" is the console's name for the default database; the API (and
	// the fake) refuse it as an id, so it must mean the empty id.
	roundTrip(t, valid.With("ONCEGATE_BACKEND", "datastore", "GOOGLE_CLOUD_PROJECT", dsfake.Project,
		"ONCEGATE_DATASTORE_DATABASE", "(default)"))
	_, err := gateenv.New(context.Background(), &gateenv.Options{Getenv: valid.With("ONCEGATE_BACKEND", "datastore").Get})
	var ee *sizing.EnvError
	if !errors.As(err, &ee) || ee.Var != gateenv.EnvProject {
		t.Errorf("no project: %v", err)
	}
	_, err = gateenv.New(context.Background(), &gateenv.Options{Getenv: valid.With("ONCEGATE_BACKEND", "datastore",
		"GOOGLE_CLOUD_PROJECT", dsfake.Project, "ONCEGATE_DATASTORE_KIND", "__reserved__").Get})
	if !errors.As(err, &ee) || ee.Var != gateenv.EnvDatastoreKind {
		t.Errorf("reserved kind: %v", err)
	}
}

// TestRedisAddrErrorChainHidesPassword: a malformed ONCEGATE_REDIS_ADDR is
// refused with an error none of whose wrapped errors quotes the password
// (net/url's *url.Error and net's *net.AddrError quote their input whole), so
// a logger or error reporter that walks the chain, or errors.As to a
// *url.Error, never sees it.
func TestRedisAddrErrorChainHidesPassword(t *testing.T) {
	const pw = "Pw0rdSecret"
	for _, v := range []string{
		"redis://u:" + pw + "@h:port/0",     // url.Parse: invalid port
		"rediss://:" + pw + "@h:6379/0\x7f", // url.Parse: control character
		"REDIS://u:" + pw + "@h:6379",       // not a URL prefix: a host list
		"u:" + pw + "@h:6379",               // host:port with user information
		"h1:1,u:" + pw + "@h2:x",            // in a Cluster list
		"redis://u:" + pw + "@[::1:6379/0",  // url.Parse: bad IPv6 literal
	} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // nothing is dialled
		_, err := gateenv.New(ctx, &gateenv.Options{Getenv: valid.With("ONCEGATE_BACKEND", "redis", "ONCEGATE_REDIS_ADDR", v).Get})
		var ee *sizing.EnvError
		if !errors.As(err, &ee) || ee.Var != gateenv.EnvRedisAddr {
			t.Errorf("%q: err = %v, want a *sizing.EnvError naming %s", v, err, gateenv.EnvRedisAddr)
			continue
		}
		for _, e := range errorChain(err) {
			if strings.Contains(e.Error(), pw) {
				t.Errorf("%q: a wrapped %T shows the password: %q", v, e, e.Error())
			}
		}
	}
}

// errorChain returns err and every error it wraps, through Unwrap() error
// and Unwrap() []error.
func errorChain(err error) []error {
	var out []error
	for queue := []error{err}; len(queue) > 0; queue = queue[1:] {
		e := queue[0]
		if e == nil {
			continue
		}
		out = append(out, e)
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			queue = append(queue, u.Unwrap())
		case interface{ Unwrap() []error }:
			queue = append(queue, u.Unwrap()...)
		}
	}
	return out
}
