package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
	"github.com/oncegate/oncegate/sizing"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestSizingVerdicts(t *testing.T) {
	out, err := run(t, "sizing", "--lease", "60s", "--heartbeat", "20s", "--work-deadline", "5m")
	if err != nil || !strings.Contains(out, "verdict: safe") || !strings.Contains(out, "conservative") {
		t.Fatalf("safe plan: %v\n%s", err, out)
	}
	out, err = run(t, "sizing", "--lease", "60s", "--work-deadline", "5m")
	if !errors.Is(err, sizing.ErrUnsafePlan) || !strings.Contains(out, "verdict: unsafe") || !strings.Contains(out, "Lease") {
		t.Fatalf("unsafe plan (lease under the work deadline, no heartbeat): err %v\n%s", err, out)
	}
	out, err = run(t, "sizing", "--recommend", "--work-deadline", "5m")
	if err != nil || !strings.Contains(out, "verdict: safe") {
		t.Fatalf("recommended plan: %v\n%s", err, out)
	}
}

// TestAdminVerbsOnSQLite makes an unknown record the way a failed complete does,
// then lists, inspects, resolves and purges it through the CLI, configured by
// the environment contract.
func TestAdminVerbsOnSQLite(t *testing.T) {
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "og.db")
	for k, v := range map[string]string{
		"ONCEGATE_BACKEND": "sql", "ONCEGATE_SQL_DSN": dsn, "ONCEGATE_NAMESPACE": "orders",
		"ONCEGATE_LEASE": "60s", "ONCEGATE_HEARTBEAT": "20s", "ONCEGATE_WORK_DEADLINE": "30s",
	} {
		t.Setenv(k, v)
	}
	ctx := context.Background()
	s, err := sqlgate.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateSchema(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := s.Claim(ctx, gate.ClaimRequest{Key: "orders:po-1", Token: "t", Owner: "w1", Lease: 0, TTL: 0})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.MarkUnknown(ctx, "orders:po-1", r.Record.Fence); !ok || err != nil {
		t.Fatalf("MarkUnknown: %v %v", ok, err)
	}
	// Claimed with a zero lease: its lease expiry is its claim time, a plan
	// lease (60s) ago by the CLI's reckoning, so the age shows about a minute.
	if out, err := run(t, "unresolved"); err != nil || !strings.Contains(out, "orders:po-1") || !strings.Contains(out, "age 1m0s") || !strings.Contains(out, "1 unresolved") {
		t.Fatalf("unresolved: %v\n%s", err, out)
	}
	if out, err := run(t, "inspect", "po-1"); err != nil || !strings.Contains(out, "state        unknown") {
		t.Fatalf("inspect: %v\n%s", err, out)
	}
	if _, err := run(t, "resolve", "po-1"); err == nil {
		t.Fatal("resolve without --done or --retry accepted")
	}
	if out, err := run(t, "resolve", "po-1", "--retry"); err != nil || !strings.Contains(out, "resolved orders:po-1 as retry") {
		t.Fatalf("resolve: %v\n%s", err, out)
	}
	if _, err := run(t, "resolve", "po-1", "--done"); !errors.Is(err, gate.ErrNotUnknown) {
		t.Fatalf("resolving a resolved key: %v, want ErrNotUnknown", err)
	}
	if _, err := run(t, "inspect", "absent"); !errors.Is(err, gate.ErrNotFound) {
		t.Fatalf("inspect absent: %v", err)
	}
	if out, err := run(t, "advance-fence", "po-1", "--at-least", "40"); err != nil || !strings.Contains(out, "orders:po-1 fence 40; the next claim gets 41") {
		t.Fatalf("advance-fence: %v\n%s", err, out)
	}
	if out, err := run(t, "advance-fence", "po-1", "--at-least", "7"); err != nil || !strings.Contains(out, "fence 40") {
		t.Fatalf("advance-fence lower: %v\n%s (a fence is never lowered)", err, out)
	}
	if out, err := run(t, "purge"); err != nil || !strings.Contains(out, "purged") {
		t.Fatalf("purge: %v\n%s", err, out)
	}
}

func TestBadEnvironmentNamesTheVariable(t *testing.T) {
	t.Setenv("ONCEGATE_BACKEND", "sql")
	t.Setenv("ONCEGATE_NAMESPACE", "orders")
	t.Setenv("ONCEGATE_LEASE", "sixty")
	t.Setenv("ONCEGATE_WORK_DEADLINE", "30s")
	t.Setenv("ONCEGATE_SQL_DSN", "sqlite:"+filepath.Join(t.TempDir(), "x.db"))
	if _, err := run(t, "unresolved"); err == nil || !strings.Contains(err.Error(), "ONCEGATE_LEASE") {
		t.Fatalf("err = %v, want one naming ONCEGATE_LEASE", err)
	}
}
