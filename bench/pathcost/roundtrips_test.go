package pathcost

import (
	"net/http"
	"testing"

	"github.com/oncegate/oncegate/bench/stores"
)

// wantTrips pins each backend's store round trips per fresh message, per
// duplicate, and per delivery refused because another holds the key: held
// when the record was already there, heldRace when the delivery raced the
// winner to create it (TestContention). Where a
// figure is above the floor, the comment says why (docs/BENCHMARKS.md says what
// would close it). A change to the hot path that adds a round trip fails
// TestRoundTrips; one that removes one fails it too, so the figure and the
// docs are updated together.
var wantTrips = map[stores.Kind]struct{ fresh, dup, held, heldRace int64 }{
	stores.Memory: {0, 0, 0, 0},
	// Upsert … RETURNING (claim), UPDATE (complete). A refused upsert returns
	// no row, so a SELECT tells why: 2 for a duplicate. (SQLite's RETURNING
	// returns no unchanged row and SQLite has no data-modifying WITH; the
	// SELECT is a call into the embedded engine, not a network trip.) A racing
	// upsert waits for the winner's row and is then refused like any other.
	stores.SQLite: {2, 2, 2, 2},
	// One statement claims or, refused, reads the record (a data-modifying
	// WITH: the upsert, then the record unless the upsert wrote it); UPDATE
	// (complete). A claim that raced the winner to create the record does not
	// see it in its statement's snapshot, so a SELECT follows: 2.
	stores.Postgres: {2, 1, 1, 2},
	// INSERT … RETURNING (claim of a fresh key), UPDATE (complete). On a
	// duplicate key the same statement changes nothing and returns the stored
	// record (MariaDB 10.5+: INSERT … ON DUPLICATE KEY UPDATE … RETURNING), so
	// a refused claim is 1, also when it raced the winner: it waits for the
	// winner's row lock and then returns the row. (MySQL, which has no
	// RETURNING, takes 2: a duplicate key error, then a SELECT.)
	stores.MySQL: {2, 1, 1, 1},
	// One script per call.
	stores.Redis: {2, 1, 1, 1},
	// A claim is a Lookup outside a transaction, then for an absent key a
	// non-transactional insert Commit; complete is a transaction, a Lookup that
	// begins it, then a Commit (4). A refused claim is the Lookup alone (1). A
	// claim that found the key absent while another created it has its insert
	// refused (ALREADY_EXISTS) and looks again: Lookup, Commit, Lookup (3).
	stores.Datastore: {4, 1, 1, 3},
}

// TestRoundTrips counts, for every backend, what one push delivery costs the
// store: a fresh message, a duplicate of it on another instance, and a
// repeated duplicate on an instance whose terminal cache holds the key. Port
// calls must be at the floor on every backend (claim + complete; claim; none);
// store round trips must equal wantTrips; on the network backends the
// exchanges counted on the one warm connection must equal the round trips, which
// is what makes statements, commands and RPCs a count of round trips.
func TestRoundTrips(t *testing.T) {
	for _, kind := range stores.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			want := wantTrips[kind]
			s := openStore(t, kind, true, 1)
			a := newInstance(t, s, 0, nil)
			b := newInstance(t, s, 0, nil)
			cached := newInstance(t, s, 100, nil)

			// Warm the connection: prepare the statements, load the scripts.
			warm := envelope(t, "warm-1")
			for _, in := range []instance{a, b} {
				if m := measure(t, s, in, warm); m.status != http.StatusNoContent {
					t.Fatalf("warm-up: status %d", m.status)
				}
			}

			msg := envelope(t, "1001")
			fresh := measure(t, s, a, msg)
			dup := measure(t, s, b, msg)
			cachedMsg := envelope(t, "1002")
			measure(t, s, cached, cachedMsg)
			cdup := measure(t, s, cached, cachedMsg)

			for _, c := range []struct {
				name        string
				m           measured
				calls, trip int64
			}{
				{"fresh", fresh, FloorFresh, want.fresh},
				{"duplicate", dup, FloorDuplicate, want.dup},
				{"cached duplicate", cdup, FloorCachedDuplicate, 0},
			} {
				if c.m.status != http.StatusNoContent {
					t.Errorf("%s: status %d, want 204", c.name, c.m.status)
				}
				if c.m.calls != c.calls {
					t.Errorf("%s: %d port calls (%s), want %d", c.name, c.m.calls, c.m.detail, c.calls)
				}
				if c.m.trips != c.trip {
					t.Errorf("%s: %d store round trips (%s), want %d", c.name, c.m.trips, c.m.detail, c.trip)
				}
				if c.m.wire >= 0 && c.m.wire != c.m.trips {
					t.Errorf("%s: %d exchanges on the wire, but %d round trips counted above the driver (%s)", c.name, c.m.wire, c.m.trips, c.m.detail)
				}
			}
			record(Cost{
				Backend:    string(kind),
				FreshCalls: fresh.calls, FreshTrips: fresh.trips, FreshWire: fresh.wire,
				DupCalls: dup.calls, DupTrips: dup.trips, DupWire: dup.wire,
				CachedDupCalls: cdup.calls, CachedDupTrips: cdup.trips,
				FreshDetail: fresh.detail, DupDetail: dup.detail,
			})
		})
	}
}
