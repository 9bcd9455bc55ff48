package stores_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/oncegate/oncegate/bench/roundtrip"
	"github.com/oncegate/oncegate/bench/stores"
	"github.com/oncegate/oncegate/runtime/gate"
)

func TestParseKind(t *testing.T) {
	for _, k := range stores.Kinds {
		if got, err := stores.ParseKind(string(k)); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
	if _, err := stores.ParseKind("oracle"); err == nil {
		t.Error("ParseKind(oracle) accepted an unknown backend")
	}
}

// TestSQLiteCounts opens SQLite with DSN parameters of its own and checks that
// a claim and a complete are counted as the statements they are.
func TestSQLiteCounts(t *testing.T) {
	ctx := context.Background()
	dsn := filepath.Join(t.TempDir(), "r.db") + "?_pragma=synchronous(NORMAL)"
	s, err := stores.Open(ctx, stores.SQLite, stores.Config{DSN: dsn, Name: "records", MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mode string
	if err := s.SQL.DB().QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal (the default Open adds)", mode, err)
	}
	s.ResetCounts()
	res, err := s.Backend.Claim(ctx, gate.ClaimRequest{Key: "k", Token: "t", Owner: "o", Lease: time.Minute, TTL: time.Hour})
	if err != nil || res.Status != gate.Won {
		t.Fatalf("claim: %v %v", res.Status, err)
	}
	if ok, err := s.Backend.Complete(ctx, gate.Completion{Key: "k", Fence: res.Record.Fence, TTL: time.Hour}); err != nil || !ok {
		t.Fatalf("complete: %v %v", ok, err)
	}
	if got := s.Trips(); got != 2 {
		t.Errorf("Trips = %d after a claim and a complete (%s), want 2", got, s.Counts)
	}
	if got := s.Counts.Get(roundtrip.SQLPrepare); got != 2 {
		t.Errorf("%s = %d, want 2 (each statement prepared once on the one connection)", roundtrip.SQLPrepare, got)
	}
	if err := s.Probe(ctx); err != nil {
		t.Errorf("Probe: %v", err)
	}
}
