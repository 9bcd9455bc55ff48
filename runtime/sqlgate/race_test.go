package sqlgate_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// TestThirtyTwoConnectionsOneWinner races 32 claimers, each with its own pool of
// one connection (as 32 processes would), on a fresh key, a lapsed claim and an
// expired done record: exactly one wins each round and every other one is told
// HeldByOther; no driver error (duplicate key, deadlock, serialization failure,
// busy) escapes. PostgreSQL runs twice: at its default READ COMMITTED, and with
// sessions whose default_transaction_isolation is SERIALIZABLE.
func TestThirtyTwoConnectionsOneWinner(t *testing.T) {
	const racers = 32
	type variant struct {
		name   string
		d      sqlgate.Dialect
		params map[string]string
	}
	variants := []variant{
		{"postgres", sqlgate.Postgres, nil},
		{"postgres-serializable", sqlgate.Postgres, map[string]string{"default_transaction_isolation": "serializable"}},
		{"mysql", sqlgate.MySQL, nil},
		{"sqlite", sqlgate.SQLite, nil},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			thirtyTwo(t, v.d, v.params, racers)
		})
	}
}

func thirtyTwo(t *testing.T, d sqlgate.Dialect, params map[string]string, racers int) {
	ctx := context.Background()
	setup := newStore(t, openDB(t, d, nil), d)
	stores := make([]*sqlgate.Store, racers)
	for i := range stores {
		db := samePlace(t, d, setup.DB(), params)
		db.SetMaxOpenConns(1)
		s, err := sqlgate.New(db, d, &sqlgate.Options{Table: setup.Table()})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.PingContext(ctx); err != nil {
			t.Fatalf("connect racer %d: %v", i, err)
		}
		stores[i] = s
	}
	rounds := []struct {
		name    string
		prepare func(key string)
		fence   int64
	}{
		{"fresh key", func(string) {}, 1},
		{"lapsed claim", func(key string) {
			claim(t, setup, key, 0)
		}, 2},
		{"expired done", func(key string) {
			r := claim(t, setup, key, time.Minute)
			if ok, err := setup.Complete(ctx, gate.Completion{Key: key, Fence: r.Fence, TTL: 0}); err != nil || !ok {
				t.Fatalf("complete: %v %v", ok, err)
			}
		}, 2},
	}
	for _, round := range rounds {
		for rep := range 3 {
			key := round.name + ":" + string(rune('a'+rep))
			round.prepare(key)
			won, held, fence := raceClaims(t, stores, key)
			if won != 1 || held != racers-1 || fence != round.fence {
				t.Fatalf("%s: won=%d held=%d winner's fence=%d; want 1, %d, %d", round.name, won, held, fence, racers-1, round.fence)
			}
		}
	}
}

// raceClaims starts one claim per store at once on key and counts the answers.
func raceClaims(t *testing.T, stores []*sqlgate.Store, key string) (won, held int, fence int64) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, s := range stores {
		wg.Go(func() {
			<-start
			res, err := s.Claim(context.Background(), gate.ClaimRequest{Key: key, Token: newToken(), Owner: "racer", Lease: time.Minute, TTL: time.Hour})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Errorf("claim: %v", err)
			case res.Status == gate.Won:
				won++
				fence = res.Record.Fence
			case res.Status == gate.HeldByOther:
				held++
			default:
				t.Errorf("claim answered %v", res.Status)
			}
		})
	}
	close(start)
	wg.Wait()
	return won, held, fence
}

// samePlace opens another pool on the database behind db, with params as for
// openDB.
func samePlace(t testing.TB, d sqlgate.Dialect, db *sql.DB, params map[string]string) *sql.DB {
	t.Helper()
	if d != sqlgate.SQLite {
		return openDB(t, d, params)
	}
	var file string
	if err := db.QueryRow("SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file); err != nil {
		t.Fatalf("sqlite file: %v", err)
	}
	o, err := sql.Open("sqlite", file+"?_busy_timeout=10000&_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.Close() })
	return o
}
