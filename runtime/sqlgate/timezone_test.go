package sqlgate_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// TestSessionTimeZoneDoesNotMatter runs the same claim sequence with the
// session's time zone set to UTC, Asia/Tokyo and America/New_York: the answers
// are the same, and every time the Store reports is the real instant (checked
// against this host's clock, which the local server shares), not one shifted by
// the zone's offset.
func TestSessionTimeZoneDoesNotMatter(t *testing.T) {
	for _, d := range []sqlgate.Dialect{sqlgate.Postgres, sqlgate.MySQL} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			var want []string
			for _, zone := range []string{"UTC", "Asia/Tokyo", "America/New_York"} {
				params := zoneParams(t, d, zone)
				db := openDB(t, d, params)
				checkSessionZone(t, d, db, params)
				got := claimSequence(t, newStore(t, db, d))
				if want == nil {
					want = got
				} else if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("time zone %s: answers %v, want %v (as in UTC)", zone, got, want)
				}
			}
		})
	}
}

// zoneParams returns the DSN parameters that set the session's time zone. A
// MariaDB server without time zone tables knows only offsets; then the zone's
// offset now stands in for it.
func zoneParams(t *testing.T, d sqlgate.Dialect, zone string) map[string]string {
	if d == sqlgate.Postgres {
		return map[string]string{"timezone": zone}
	}
	db := openDB(t, d, nil)
	if _, err := db.Exec("SET time_zone = ?", zone); err != nil {
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1298 { // ER_UNKNOWN_TIME_ZONE
			t.Fatalf("SET time_zone: %v", err)
		}
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatalf("load %s: %v", zone, err)
		}
		_, off := time.Now().In(loc).Zone()
		sign := "+"
		if off < 0 {
			sign, off = "-", -off
		}
		offset := fmt.Sprintf("%s%02d:%02d", sign, off/3600, off%3600/60)
		t.Logf("server has no time zone tables; using %s's current offset %s", zone, offset)
		zone = offset
	}
	return map[string]string{"time_zone": "'" + zone + "'"}
}

// checkSessionZone fails the test unless the pool's sessions use zone: the
// setting must have reached the server for the test to mean anything.
func checkSessionZone(t *testing.T, d sqlgate.Dialect, db *sql.DB, params map[string]string) {
	t.Helper()
	q, want := "SHOW TimeZone", params["timezone"]
	if d == sqlgate.MySQL {
		q, want = "SELECT @@session.time_zone", strings.Trim(params["time_zone"], "'")
	}
	var got string
	if err := db.QueryRow(q).Scan(&got); err != nil || got != want {
		t.Fatalf("session time zone = %q, %v; want %q", got, err, want)
	}
}

// claimSequence claims, completes, reclaims and inspects keys, checks every time
// the Store reports against this host's clock, and returns the answers.
func claimSequence(t *testing.T, s *sqlgate.Store) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	call := func(key string, lease time.Duration) gate.Record {
		t.Helper()
		before := time.Now()
		res, err := s.Claim(ctx, gate.ClaimRequest{Key: key, Token: newToken(), Owner: "tz", Lease: lease, TTL: time.Hour})
		if err != nil {
			t.Fatalf("Claim(%s): %v", key, err)
		}
		out = append(out, fmt.Sprintf("%s:%v:%d", key, res.Status, res.Record.Fence))
		if res.Status == gate.Won {
			near(t, "lease_expiry", res.Record.LeaseExpiry, before.Add(lease), time.Now().Add(lease))
			near(t, "expires_at", res.Record.ExpiresAt, before.Add(lease+time.Hour), time.Now().Add(lease+time.Hour))
		}
		return res.Record
	}
	r := call("a", time.Minute)
	call("a", time.Minute)
	before := time.Now()
	if ok, err := s.Complete(ctx, gate.Completion{Key: "a", Fence: r.Fence, TTL: 2 * time.Hour}); err != nil || !ok {
		t.Fatalf("Complete: %v %v", ok, err)
	}
	after := time.Now()
	done := call("a", time.Minute)
	near(t, "done_at", done.DoneAt, before, after)
	near(t, "done expires_at", done.ExpiresAt, before.Add(2*time.Hour), after.Add(2*time.Hour))
	call("b", 100*time.Millisecond)
	call("b", time.Minute)
	time.Sleep(250 * time.Millisecond)
	call("b", time.Minute)
	if rec, ok, err := s.Inspect(ctx, "b"); err != nil || !ok || rec.Fence != 2 {
		t.Fatalf("Inspect(b) = %+v, %v, %v; want fence 2", rec, ok, err)
	}
	return out
}

// near fails the test unless got lies in [lo, hi], widened by the millisecond
// rounding of stored times and a little clock read slack.
func near(t *testing.T, what string, got, lo, hi time.Time) {
	t.Helper()
	const slack = 50 * time.Millisecond
	if got.Before(lo.Add(-slack)) || got.After(hi.Add(slack)) {
		t.Fatalf("%s = %s, want between %s and %s (a time zone offset leaked in?)", what,
			got.Format(time.RFC3339Nano), lo.UTC().Format(time.RFC3339Nano), hi.UTC().Format(time.RFC3339Nano))
	}
}
