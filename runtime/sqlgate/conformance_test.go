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
	// twoStatements makes MySQL-dialect stores claim as on a server without
	// INSERT … RETURNING (MySQL, MariaDB before 10.5).
	twoStatements bool
}

func (h *harness) MakeBackend(_ context.Context, t *testing.T) (gate.Backend, error) {
	s := newStore(t, h.db, h.d)
	if h.twoStatements {
		sqlgate.WithoutReturning(s)
	}
	return s, nil
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

// TestConformanceTwoStatementClaim runs the suite on MariaDB with the claim path
// of servers without INSERT … RETURNING (MySQL, MariaDB before 10.5), which the
// MariaDB here would otherwise never take.
func TestConformanceTwoStatementClaim(t *testing.T) {
	db := openDB(t, sqlgate.MySQL, nil)
	gatetest.RunConformanceTests(t, func(context.Context, *testing.T) (gatetest.Harness, error) {
		return &harness{db: db, d: sqlgate.MySQL, twoStatements: true}, nil
	})
}

func TestMariaDBAtLeast(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    bool
	}{
		{"10.11.19-MariaDB-0+deb12u1", true},
		{"10.5.0-MariaDB", true},
		{"5.5.5-10.6.12-MariaDB-log", true},
		{"11.4.2-MariaDB", true},
		{"10.4.32-MariaDB", false},
		{"8.0.36", false},
		{"8.4.0-MySQL", false},
		{"MariaDB", false},
		{"", false},
	} {
		if got := sqlgate.MariaDBAtLeast(tc.version, 10, 5); got != tc.want {
			t.Errorf("MariaDBAtLeast(%q, 10, 5) = %v, want %v", tc.version, got, tc.want)
		}
	}
}
