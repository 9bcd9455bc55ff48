package fencedsink_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/oncegate/oncegate/runtime/fencedsink"
	"github.com/oncegate/oncegate/runtime/gate"
)

func TestNewValidates(t *testing.T) {
	for _, tc := range []struct {
		table string
		opts  fencedsink.Options
		want  string // substring of the error; empty means valid
	}{
		{"fences", fencedsink.Options{}, ""},
		{"billing.fences", fencedsink.Options{KeyColumn: "id", FenceColumn: "term_token", Dialect: fencedsink.SQLite}, ""},
		{"", fencedsink.Options{}, `fencedsink.New: table ""`},
		{"a.b.c", fencedsink.Options{}, "optionally schema-qualified"},
		{"fences; DROP TABLE x", fencedsink.Options{}, "must be an identifier"},
		{"1fences", fencedsink.Options{}, "must be an identifier"},
		{"fences", fencedsink.Options{KeyColumn: "k-1"}, `fencedsink.Options.KeyColumn: "k-1"`},
		{"fences", fencedsink.Options{FenceColumn: `"fence"`}, "fencedsink.Options.FenceColumn"},
		{"fences", fencedsink.Options{Dialect: 7}, "fencedsink.Options.Dialect: Dialect(7) is not supported"},
	} {
		_, err := fencedsink.New(tc.table, &tc.opts)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("New(%q): %v", tc.table, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("New(%q, %+v): err = %v, want it to contain %q", tc.table, tc.opts, err, tc.want)
		}
	}
}

func TestStatements(t *testing.T) {
	pg, _ := fencedsink.New("fences", nil)
	lite, _ := fencedsink.New("fences", &fencedsink.Options{KeyColumn: "id", Dialect: fencedsink.SQLite})
	for _, tc := range []struct{ got, want string }{
		{pg.TakeSQL(), "INSERT INTO fences AS cur (key, fence) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET fence = excluded.fence WHERE cur.fence < excluded.fence"},
		{pg.HoldSQL(), "INSERT INTO fences AS cur (key, fence) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET fence = excluded.fence WHERE cur.fence <= excluded.fence"},
		{lite.TakeSQL(), "INSERT INTO fences AS cur (id, fence) VALUES (?1, ?2) ON CONFLICT (id) DO UPDATE SET fence = excluded.fence WHERE cur.fence < excluded.fence"},
	} {
		if tc.got != tc.want {
			t.Errorf("statement\n got %s\nwant %s", tc.got, tc.want)
		}
	}
}

func TestTakeAndHold(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, db *sql.DB, d fencedsink.Dialect) {
		ctx := context.Background()
		s := newSink(t, db, d)
		for i, step := range []struct {
			op        string
			key       string
			token     int64
			stale     bool
			fenceThen int64
		}{
			{"take", "k", 5, false, 5},   // absent counts as fence 0
			{"take", "k", 5, true, 5},    // the first write of a term needs fence < token
			{"hold", "k", 5, false, 5},   // later writes accept fence <= token
			{"hold", "k", 4, true, 5},    // a lower token is always refused
			{"take", "k", 3, true, 5},    //
			{"take", "k", 7, false, 7},   // a newer token takes the term
			{"hold", "k", 5, true, 7},    // and the older one's term is over
			{"hold", "new", 9, false, 9}, // absent counts as fence 0
			{"take", "max", gate.MaxFence, false, gate.MaxFence},
		} {
			guard := s.Take
			if step.op == "hold" {
				guard = s.Hold
			}
			err := guard(ctx, db, step.key, step.token)
			if step.stale != errors.Is(err, fencedsink.ErrStaleToken) || (!step.stale && err != nil) {
				t.Fatalf("step %d: %s(%s, %d): err = %v, want stale=%v", i, step.op, step.key, step.token, err, step.stale)
			}
			if f, err := s.Fence(ctx, db, step.key); err != nil || f != step.fenceThen {
				t.Fatalf("step %d: fence = %d, %v; want %d", i, f, err, step.fenceThen)
			}
		}
		if f, err := s.Fence(ctx, db, "absent"); err != nil || f != 0 {
			t.Fatalf("Fence(absent) = %d, %v; want 0", f, err)
		}
	})
}

func TestBadTokensAreNotStale(t *testing.T) {
	s, _ := fencedsink.New("never_touched", nil)
	for _, tok := range []int64{0, -1, gate.MaxFence + 1} {
		err := s.Take(context.Background(), nil, "k", tok)
		if err == nil || errors.Is(err, fencedsink.ErrStaleToken) || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("Take with token %d: err = %v, want an out-of-range error", tok, err)
		}
	}
	if err := s.Hold(context.Background(), nil, "", 1); err == nil || !strings.Contains(err.Error(), "key is empty") {
		t.Errorf("Hold with an empty key: err = %v", err)
	}
}

type result struct {
	n   int64
	err error
}

func (r result) LastInsertId() (int64, error) { return 0, errors.ErrUnsupported }
func (r result) RowsAffected() (int64, error) { return r.n, r.err }

func TestAffected(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		res   sql.Result
		err   error
		stale bool
		isErr error
	}{
		{result{n: 1}, nil, false, nil},
		{result{n: 0}, nil, true, fencedsink.ErrStaleToken},
		{nil, boom, false, boom},
		{result{err: boom}, nil, false, boom},
	} {
		err := fencedsink.Affected(tc.res, tc.err)
		if !errors.Is(err, tc.isErr) || (tc.isErr == nil && err != nil) || errors.Is(err, fencedsink.ErrStaleToken) != tc.stale {
			t.Errorf("Affected(%v, %v) = %v, want %v", tc.res, tc.err, err, tc.isErr)
		}
	}
}

func TestGuardOnTheUsersOwnTable(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, db *sql.DB, d fencedsink.Dialect) {
		ctx := context.Background()
		table := newTable(t, db, "id TEXT PRIMARY KEY, balance BIGINT NOT NULL DEFAULT 0, fence BIGINT NOT NULL DEFAULT 0")
		exec(t, db, "INSERT INTO "+table+" (id, balance) VALUES ('acct-1', 10)")
		update := "UPDATE " + table + " SET balance = $1, fence = $2 WHERE id = $3 AND fence <= $2"
		if d == fencedsink.SQLite {
			update = strings.NewReplacer("$", "?").Replace(update)
		}
		write := func(balance, token int64) error {
			return fencedsink.Affected(db.ExecContext(ctx, update, balance, token, "acct-1"))
		}
		if err := write(20, 2); err != nil {
			t.Fatalf("write with token 2: %v", err)
		}
		if err := write(99, 1); !errors.Is(err, fencedsink.ErrStaleToken) {
			t.Fatalf("write with token 1 after 2: err = %v, want ErrStaleToken", err)
		}
		var balance int64
		if err := db.QueryRowContext(ctx, "SELECT balance FROM "+table+" WHERE id = 'acct-1'").Scan(&balance); err != nil || balance != 20 {
			t.Fatalf("balance = %d, %v; want 20", balance, err)
		}
	})
}
