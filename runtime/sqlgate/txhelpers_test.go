package sqlgate_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"strconv"
	"testing"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// effects is a user table written in the same transactions as the records: one
// row per effect, keyed by the operation's key.
type effects struct {
	db    *sql.DB
	d     sqlgate.Dialect
	table string
}

// newEffects creates an effects table next to s's table, dropped when the test
// ends.
func newEffects(t testing.TB, s *sqlgate.Store) *effects {
	t.Helper()
	e := &effects{db: s.DB(), d: s.Dialect(), table: testenv.UniqueName(t, "fx")}
	if _, err := e.db.Exec(`CREATE TABLE ` + e.table + ` (id VARCHAR(200) NOT NULL PRIMARY KEY, fence BIGINT NOT NULL)`); err != nil {
		t.Fatalf("create effects table: %v", err)
	}
	t.Cleanup(func() { dropTable(t, e.db, e.d, e.table) })
	return e
}

// ph returns the n-th placeholder for d.
func ph(d sqlgate.Dialect, n int) string {
	if d == sqlgate.Postgres {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// write records the effect of claim c in tx.
func (e *effects) write(tx *sql.Tx, c gate.Claim) error {
	_, err := tx.Exec(`INSERT INTO `+e.table+` (id, fence) VALUES (`+ph(e.d, 1)+`, `+ph(e.d, 2)+`)`, c.Key, c.Fence)
	return err
}

// count returns how many effects key has.
func (e *effects) count(t testing.TB, key string) int {
	t.Helper()
	var n int
	if err := e.db.QueryRow(`SELECT count(*) FROM `+e.table+` WHERE id = `+ph(e.d, 1), key).Scan(&n); err != nil {
		t.Fatalf("count effects: %v", err)
	}
	return n
}

// state returns key's record state, or "" when it has none.
func state(t testing.TB, s *sqlgate.Store, key string) (gate.State, int64) {
	t.Helper()
	rec, found, err := s.Inspect(context.Background(), key)
	if err != nil {
		t.Fatalf("Inspect(%q): %v", key, err)
	}
	if !found {
		return "", 0
	}
	return rec.State, rec.Fence
}

// expectRecord fails the test unless key's record is in state st (or absent for
// "") with fence, and key has n effects.
func expectRecord(t testing.TB, s *sqlgate.Store, e *effects, key string, st gate.State, fence int64, n int) {
	t.Helper()
	gotSt, gotFence := state(t, s, key)
	if gotSt != st || gotFence != fence {
		t.Errorf("record %q = %q fence %d, want %q fence %d", key, gotSt, gotFence, st, fence)
	}
	if got := e.count(t, key); got != n {
		t.Errorf("effects of %q = %d, want %d", key, got, n)
	}
}

// recordErr returns the *gate.RecordError in err matching want, or fails.
func recordErr(t testing.TB, err, want error) *gate.RecordError {
	t.Helper()
	var re *gate.RecordError
	if !errors.Is(err, want) || !errors.As(err, &re) {
		t.Fatalf("err = %v, want %v in a *gate.RecordError", err, want)
	}
	return re
}

// sha256Of returns the SHA-256 of s.
func sha256Of(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}
