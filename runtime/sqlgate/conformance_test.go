package sqlgate_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gatetest"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// harness makes a Store on a fresh table per backend. The clock is the database
// server's, so Advance waits.
type harness struct {
	db *sql.DB
	d  sqlgate.Dialect
}

func (h *harness) MakeBackend(_ context.Context, t *testing.T) (gate.Backend, error) {
	return newStore(t, h.db, h.d), nil
}

func (h *harness) Advance(_ *testing.T, d time.Duration) { time.Sleep(d) }
func (h *harness) Close()                                {}

func TestConformance(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		db := openDB(t, d, nil)
		gatetest.RunConformanceTests(t, func(context.Context, *testing.T) (gatetest.Harness, error) {
			return &harness{db: db, d: d}, nil
		})
	})
}
