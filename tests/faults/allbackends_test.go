package faults_test

import (
	"path/filepath"
	"testing"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
)

// everyBackend is each backend the project ships, on a real server where it has
// one, each made fresh (own prefix, table or fake) for the test.
var everyBackend = []struct {
	name string
	make func(t *testing.T) gate.Backend
	// limit, when set, is the longest key the backend stores (a Datastore entity
	// holds at most 1 MiB, and the record keeps the original key); a longer key
	// must be refused with an error that names the limit.
	limit int
}{
	{"memory", func(t *testing.T) gate.Backend { return memgate.New(nil) }, 0},
	{"redis", func(t *testing.T) gate.Backend {
		prefix := testenv.UniqueName(t, "hostile") + ":"
		t.Cleanup(func() { deleteRedisPrefix(t, testenv.Redis(t), prefix) })
		return redisStore(t, testenv.Redis(t), prefix)
	}, 0},
	{"postgres", func(t *testing.T) gate.Backend {
		dsn, direct := postgresVia(t, "")
		return sqlStore(t, dsn, direct, testenv.UniqueName(t, "hostile"))
	}, 0},
	{"mysql", func(t *testing.T) gate.Backend {
		dsn := testenv.MySQLURL(t)
		return sqlStore(t, dsn, dsn, testenv.UniqueName(t, "hostile"))
	}, 0},
	{"sqlite", func(t *testing.T) gate.Backend {
		dsn := "sqlite:" + filepath.Join(t.TempDir(), "records.db")
		return sqlStore(t, dsn, dsn, "oncegate_records")
	}, 0},
	{"datastore (emulator)", func(t *testing.T) gate.Backend {
		return datastoreEmulatorStore(t, nil)
	}, 1<<20 - 4 - 1024 - 200}, // entity limit less the datastoregate's allowance and the token and owner
}
