package e2e_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/oncegate/oncegate/internal/emulator"
	"github.com/oncegate/oncegate/internal/testenv"
)

// Environment switches of the suite (see doc.go).
const (
	envFull        = "ONCEGATE_E2E_FULL"
	envBackends    = "ONCEGATE_E2E_BACKENDS"
	envSeed        = "ONCEGATE_E2E_SEED"
	envReliability = "ONCEGATE_E2E_RELIABILITY"
)

// backend is one store the workers share, configured through the runtime's
// environment contract (gateenv).
type backend struct {
	name string
	// env returns the workers' backend variables; it may start a server that
	// lives as long as t.
	env func(t *testing.T) []string
}

var allBackends = []backend{
	{"redis", func(t *testing.T) []string {
		return []string{"ONCEGATE_BACKEND=redis", "ONCEGATE_REDIS_ADDR=" + testenv.Redis(t)}
	}},
	{"postgres", func(t *testing.T) []string {
		dsn := testenv.Postgres(t)
		if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
			t.Fatalf("ONCEGATE_TEST_POSTGRES_DSN must be a postgres:// URL for the workers' ONCEGATE_SQL_DSN (got a %d-byte key=value form)", len(dsn))
		}
		return []string{"ONCEGATE_BACKEND=sql", "ONCEGATE_SQL_DSN=" + dsn}
	}},
	{"datastore", func(t *testing.T) []string {
		// Google's Datastore emulator, shared by the test binary (see
		// internal/testenv); the workers reach it through DATASTORE_EMULATOR_HOST,
		// and each world has its own kind.
		return []string{"ONCEGATE_BACKEND=datastore", "DATASTORE_EMULATOR_HOST=" + testenv.DatastoreEmulator(t),
			"GOOGLE_CLOUD_PROJECT=" + emulator.DefaultProject, "ONCEGATE_DATASTORE_KIND=" + testenv.UniqueName(t, "e2e")}
	}},
	{"sqlite", func(t *testing.T) []string {
		return []string{"ONCEGATE_BACKEND=sql", "ONCEGATE_SQL_DSN=sqlite:" + filepath.Join(t.TempDir(), "records.db")}
	}},
}

// backendsFor returns the backends a scenario runs on: all of them (or those
// ONCEGATE_E2E_BACKENDS names), or under -short the one at index turn (mod the
// count), so that the scenarios of a short run still cover every backend.
func backendsFor(t *testing.T, turn int) []backend {
	t.Helper()
	bs := allBackends
	if v := strings.TrimSpace(os.Getenv(envBackends)); v != "" {
		want := strings.Split(v, ",")
		bs = slices.DeleteFunc(slices.Clone(allBackends), func(b backend) bool { return !slices.Contains(want, b.name) })
		if len(bs) == 0 {
			t.Fatalf("%s=%q names no backend; want a comma-separated list of redis, postgres, datastore, sqlite", envBackends, v)
		}
	}
	if testing.Short() {
		return bs[turn%len(bs) : turn%len(bs)+1]
	}
	return bs
}

// eachBackend runs fn as a parallel subtest per backend of backendsFor.
func eachBackend(t *testing.T, turn int, fn func(t *testing.T, b backend)) {
	t.Helper()
	for _, b := range backendsFor(t, turn) {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			fn(t, b)
		})
	}
}
