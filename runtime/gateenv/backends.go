package gateenv

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/sizing"
)

// Opener opens one backend from the environment (read through getenv). It
// returns the backend and a func releasing its client (nil when there is none).
// A missing or malformed variable should be a *sizing.EnvError naming it.
type Opener func(ctx context.Context, getenv func(string) string) (gate.Backend, func() error, error)

// Variables of the backends' openers (the packages sqlenv, redisenv and
// datastoreenv read them), beside those in config.go.
const (
	// EnvSQLMaxConns bounds the SQL pool (sqlgate.Options.MaxConns): a whole
	// number of connections, at most what the database grants the user.
	// Empty: sqlgate.DefaultMaxConns.
	EnvSQLMaxConns = "ONCEGATE_SQL_MAX_CONNS"
	// EnvRedisAllowEviction set to 1 opens Redis even when a server may evict
	// records (redisgate.Options.AllowEviction); default 0, refused.
	EnvRedisAllowEviction = "ONCEGATE_REDIS_ALLOW_EVICTION"
	// EnvDatastoreMaxClockSkew is datastoregate.Options.MaxClockSkew, a Go
	// duration (empty: datastoregate.DefaultMaxClockSkew).
	EnvDatastoreMaxClockSkew = "ONCEGATE_DATASTORE_MAX_CLOCK_SKEW"
)

// allBackendsPackage is the import path of the package that links every
// backend of this module (sql, redis, datastore) into gateenv.
const allBackendsPackage = "github.com/oncegate/oncegate/runtime/gateenv/allbackends"

// backendPackages maps the backends of this module that a program links by
// importing a package to that package's import path; memory is always linked.
var backendPackages = map[string]string{
	"sql":       "github.com/oncegate/oncegate/runtime/gateenv/sqlenv",
	"redis":     "github.com/oncegate/oncegate/runtime/gateenv/redisenv",
	"datastore": "github.com/oncegate/oncegate/runtime/gateenv/datastoreenv",
}

var (
	registryMu sync.Mutex
	registry   = map[string]Opener{"memory": OpenMemory}
)

// Register makes a backend available as ONCEGATE_BACKEND=name to every later
// New, NewAdmin and pullenv.New that leaves Options.Backends nil. The packages
// gateenv/sqlenv ("sql"), gateenv/redisenv ("redis") and
// gateenv/datastoreenv ("datastore") call it from init, so a program links a
// backend's client only when its main imports that package (or
// gateenv/allbackends), as a database/sql driver is linked. "memory" is always
// registered. Register panics when open is nil or name is empty or already
// registered, as sql.Register does.
func Register(name string, open Opener) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if open == nil || name == "" {
		panic(fmt.Sprintf("gateenv: Register(%q) with a nil opener or an empty name", name))
	}
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("gateenv: Register called twice for backend %q", name))
	}
	registry[name] = open
}

// Backends returns a fresh copy of the registry: "memory" and every backend
// registered with Register (those whose packages the program imports). Add
// entries to the copy and pass it as Options.Backends to offer more for one
// call.
func Backends() map[string]Opener {
	registryMu.Lock()
	defer registryMu.Unlock()
	return maps.Clone(registry)
}

// names returns the backends m offers (a nil opener offers none), sorted.
func names(m map[string]Opener) []string {
	var out []string
	for name, open := range m {
		if open != nil {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// backendError is the error for an ONCEGATE_BACKEND value that reg lacks: a
// *sizing.EnvError listing the linked backends or, when the value names a
// backend of this module that the program did not link, one saying which
// package to import (unwrapping to that *sizing.EnvError).
func backendError(name string, reg map[string]Opener) error {
	ee := &sizing.EnvError{Var: EnvBackend, Value: name, Want: "one of " + strings.Join(names(reg), ", ")}
	if pkg, known := backendPackages[name]; known {
		return &notLinkedError{env: ee, pkg: pkg}
	}
	return ee
}

// notLinkedError says that ONCEGATE_BACKEND names a backend of this module
// whose package the program does not import.
type notLinkedError struct {
	env *sizing.EnvError
	pkg string
}

func (e *notLinkedError) Error() string {
	return fmt.Sprintf("%s=%q: the %s backend is not linked into this program (linked: %s); add import _ %q to package main, or %q for every backend",
		e.env.Var, e.env.Value, e.env.Value, strings.TrimPrefix(e.env.Want, "one of "), e.pkg, allBackendsPackage)
}

func (e *notLinkedError) Unwrap() error { return e.env }

// OpenMemory opens a memgate store. It protects one process only: records
// vanish on restart and other instances do not see them.
func OpenMemory(context.Context, func(string) string) (gate.Backend, func() error, error) {
	return memgate.New(nil), nil, nil
}
