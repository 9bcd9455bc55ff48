package faults_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/fencedsink"
)

// fencedTable is a fenced sink on the shared PostgreSQL: a fence table guarded
// by fencedsink and an effects table that records every write that got through,
// with the token it carried.
type fencedTable struct {
	db      *sql.DB
	sink    *fencedsink.Sink
	effects string
}

func newFencedTable(t *testing.T) *fencedTable {
	t.Helper()
	_, direct := postgresVia(t, "")
	db, err := sql.Open("pgx", direct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	name := testenv.UniqueName(t, "sink")
	s, err := fencedsink.New(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.CreateTable(ctx, db); err != nil {
		t.Fatal(err)
	}
	ft := &fencedTable{db: db, sink: s, effects: name + "_effects"}
	if _, err := db.ExecContext(ctx, `CREATE TABLE `+ft.effects+` (key text NOT NULL, token bigint NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Exec(`DROP TABLE IF EXISTS ` + name + `, ` + ft.effects) })
	return ft
}

// write records one effect for key under term, through the term's guard. It
// reports whether the write got through; a refusal matches
// fencedsink.ErrStaleToken.
func (ft *fencedTable) write(ctx context.Context, term *fencedsink.Term) (bool, error) {
	err := term.Write(ctx, ft.db, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO `+ft.effects+` (key, token) VALUES ($1, $2)`, term.Key(), term.Token())
		return err
	})
	if errors.Is(err, fencedsink.ErrStaleToken) {
		return false, err
	}
	return err == nil, err
}

// effectsBy counts the effects written for key under token.
func (ft *fencedTable) effectsBy(t *testing.T, key string, token int64) int {
	t.Helper()
	var n int
	if err := ft.db.QueryRow(`SELECT count(*) FROM `+ft.effects+` WHERE key = $1 AND token = $2`, key, token).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
