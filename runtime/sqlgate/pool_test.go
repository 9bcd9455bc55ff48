package sqlgate_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// limitedRole creates a PostgreSQL login role allowed limit connections, with
// the rights to create and use a table in schema public, and returns its DSN.
// The role and what it owns are dropped when the test ends.
func limitedRole(t *testing.T, limit int) string {
	t.Helper()
	dsn := testenv.Postgres(t)
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Skipf("testenv DSN %q is not a URL", dsn)
	}
	admin := openDB(t, sqlgate.Postgres, nil)
	role := testenv.UniqueName(t, "limited")
	ctx := context.Background()
	for _, q := range []string{
		`CREATE ROLE "` + role + `" LOGIN PASSWORD 'limited-pw' CONNECTION LIMIT ` + strconv.Itoa(limit),
		`GRANT USAGE, CREATE ON SCHEMA public TO "` + role + `"`,
	} {
		if _, err := admin.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		for _, q := range []string{`DROP OWNED BY "` + role + `"`, `DROP ROLE "` + role + `"`} {
			if _, err := admin.ExecContext(context.Background(), q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	u.User = url.UserPassword(role, "limited-pw")
	return u.String()
}

// deliveries runs n concurrent Lock calls (distinct keys, a body of work each)
// through a Gate on s, keys prefix + 0…n-1, each claim bounded by claimTimeout, and counts the
// answers: ran, store unavailable (the push adapter's 503), not recorded, and
// anything else.
type tally struct{ ran, unavailable, notRecorded, other atomic.Int64 }

func deliveries(t *testing.T, s *sqlgate.Store, prefix string, n int, work, claimTimeout time.Duration) *tally {
	t.Helper()
	g, err := gate.New(s, &gate.Options{Lease: time.Minute, WorkDeadline: 30 * time.Second, StoreTimeout: 10 * time.Second,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	var c tally
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
			defer cancel()
			err := g.Lock(ctx, prefix+strconv.Itoa(i), func(context.Context, gate.Claim) error {
				time.Sleep(work) // the body's work; the gate holds no connection meanwhile
				return nil
			})
			switch {
			case err == nil:
				c.ran.Add(1)
			case errors.Is(err, gate.ErrStoreUnavailable):
				c.unavailable.Add(1)
			case errors.Is(err, gate.ErrNotRecorded):
				c.notRecorded.Add(1)
			default:
				c.other.Add(1)
				t.Logf("delivery %s%d: %v", prefix, i, err)
			}
		})
	}
	wg.Wait()
	return &c
}

// TestBoundedPoolUnderRoleLimit: with a role limited to 10 connections, 64
// concurrent deliveries through a pool bounded to the limit all run and are
// recorded: past the bound a delivery waits for a connection instead of
// opening one the server refuses. The control, an unbounded pool on the same
// role, shows what the bound prevents.
func TestBoundedPoolUnderRoleLimit(t *testing.T) {
	const (
		limit, n = 10, 64
		work     = 100 * time.Millisecond
		claimFor = 10 * time.Second
	)
	dsn := limitedRole(t, limit)
	ctx := context.Background()
	s, err := sqlgate.Open(ctx, dsn, &sqlgate.Options{Table: testenv.UniqueName(t, "og"), MaxConns: limit})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSchema(ctx); err != nil {
		t.Fatal(err)
	}
	got := deliveries(t, s, "delivery-", n, work, claimFor)
	st := s.DB().Stats()
	t.Logf("bounded to %d: ran %d, store unavailable %d, not recorded %d, other %d; %d connections open at most (wait count %d, waited %s)",
		limit, got.ran.Load(), got.unavailable.Load(), got.notRecorded.Load(), got.other.Load(), st.MaxOpenConnections, st.WaitCount, st.WaitDuration)
	if got.ran.Load() != n {
		t.Errorf("bounded pool: %d of %d deliveries ran and were recorded; want all", got.ran.Load(), n)
	}
	if st.MaxOpenConnections != limit {
		t.Errorf("pool bound %d, want %d", st.MaxOpenConnections, limit)
	}

	table := s.Table()
	if err := s.Close(); err != nil { // its idle connections count against the limit
		t.Fatal(err)
	}

	// The control: the same role through a pool with no bound.
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	u, err := sqlgate.New(db, sqlgate.Postgres, &sqlgate.Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	ctl := deliveries(t, u, "control-", n, work, claimFor)
	t.Logf("unbounded (control): ran %d, store unavailable %d, not recorded %d, other %d",
		ctl.ran.Load(), ctl.unavailable.Load(), ctl.notRecorded.Load(), ctl.other.Load())
}
