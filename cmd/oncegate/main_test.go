package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/localpubsub"
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

// TestSizingStoreOutage checks that sizing always reports the outage the
// attempts ride out, and sizes the attempts for a budgeted one.
func TestSizingStoreOutage(t *testing.T) {
	tests := []struct {
		args []string
		want []string
		safe bool
	}{
		{[]string{"--lease", "60s", "--heartbeat", "20s", "--work-deadline", "60s"},
			[]string{"store outage           0s  (none)", "store outage ridden out by 17 attempts", "  conservative 0s, doubling 1h28m10s;"}, true},
		{[]string{"--lease", "60s", "--heartbeat", "20s", "--work-deadline", "60s", "--max-delivery-attempts", "30"},
			[]string{"store outage ridden out by 30 attempts", "  conservative 2m10s,"}, true},
		{[]string{"--lease", "60s", "--heartbeat", "20s", "--work-deadline", "60s", "--store-outage", "5m"},
			[]string{"W = longest wait behind a holder = 2m20s, plus a 5m store outage", "45, +2 margin = 47 required", "  conservative 5m,"}, true},
		{[]string{"--lease", "60s", "--heartbeat", "20s", "--work-deadline", "60s", "--store-outage", "5m", "--max-delivery-attempts", "30"},
			[]string{"--max-delivery-attempts: Dead-letter max delivery attempts 30 cannot cover a wait of 2m20s behind a holder that dies after its last renewal (work deadline plus heartbeat plus lease) plus a store outage of 5m"}, false},
	}
	for _, tt := range tests {
		out, err := run(t, append([]string{"sizing"}, tt.args...)...)
		if (err == nil) != tt.safe {
			t.Errorf("%v: err %v", tt.args, err)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", tt.args, w, out)
			}
		}
	}
}

// TestSizingNamesInvariantsAndFixes runs the plans issue reports used: a TTL
// below the redelivery horizon, an explicit attempts count --recommend must
// raise, a zero minimum backoff.
func TestSizingNamesInvariantsAndFixes(t *testing.T) {
	out, err := run(t, "sizing", "--lease", "2m", "--work-deadline", "60s", "--ttl", "1ms")
	if !errors.Is(err, sizing.ErrUnsafePlan) || !strings.Contains(err.Error(), "invariant 4") ||
		!strings.Contains(out, "(invariant 4); raise the TTL to at least 2h36m30s") || strings.Contains(out, "verdict: safe") {
		t.Errorf("ttl 1ms: err %v\n%s", err, out)
	}
	for _, want := range []string{"15 attempts × 1m6s ack deadline + 14 × 10m max backoff = 2h36m30s",
		"claim 2s + work 1m + complete 2s + unknown mark 2s = 1m6s"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, err = run(t, "sizing", "--recommend", "--lease", "15m", "--work-deadline", "9m", "--max-delivery-attempts", "10", "--ttl", "1h")
	if err != nil || !strings.Contains(out, "--max-delivery-attempts 10 → 93  REPLACED your value:") ||
		!strings.Contains(out, "--ttl 1h → 30h  REPLACED your value: must outlive the redelivery horizon 29h26m18s (invariant 4)") {
		t.Errorf("recommend over explicit values: %v\n%s", err, out)
	}
	if strings.Contains(out, "--lease 15m →") {
		t.Errorf("recommend replaced a safe explicit lease:\n%s", out)
	}
	if _, err := run(t, "sizing", "--lease", "60s", "--work-deadline", "4s", "--min-backoff", "0s"); err == nil || !strings.Contains(err.Error(), "--min-backoff 0s") {
		t.Errorf("--min-backoff 0s: err %v, want a refusal", err)
	}
	// Computed durations are rounded for people: a lease of 5s needs a
	// heartbeat of 1.666s, not 1.666666666s.
	out, _ = run(t, "sizing", "--lease", "5s", "--heartbeat", "2s", "--work-deadline", "4s")
	if !strings.Contains(out, "lower it to 1.666s") || regexp.MustCompile(`\d\.\d{4,}s`).MatchString(out) {
		t.Errorf("unrounded durations:\n%s", out)
	}
}

// TestSizingHelpExamples runs every example of `sizing --help`: each is safe
// unless the comment above it says UNSAFE, and then it is refused.
func TestSizingHelpExamples(t *testing.T) {
	unsafe, n := false, 0
	for _, line := range strings.Split(newSizingCmd().Example, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "# UNSAFE"):
			unsafe = true
		case strings.HasPrefix(line, "oncegate sizing"):
			n++
			out, err := run(t, strings.Fields(line)[1:]...)
			if unsafe != (err != nil) || unsafe != strings.Contains(out, "verdict: unsafe") {
				t.Errorf("%s (marked unsafe: %v): err %v\n%s", line, unsafe, err, out)
			}
			unsafe = false
		}
	}
	if n < 3 {
		t.Errorf("only %d examples", n)
	}
}

// adminSQLite configures the CLI for a fresh SQLite store with the namespace
// "orders" (only the backend, its address and the namespace: no plan) and
// returns that store, its schema created, closed when t ends.
func adminSQLite(t *testing.T) *sqlgate.Store {
	t.Helper()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "og.db")
	for k, v := range map[string]string{"ONCEGATE_BACKEND": "sql", "ONCEGATE_SQL_DSN": dsn, "ONCEGATE_NAMESPACE": "orders"} {
		t.Setenv(k, v)
	}
	s, err := sqlgate.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.CreateSchema(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAdminVerbsOnSQLite makes an unknown record the way a failed complete does,
// then lists, inspects, resolves and purges it through the CLI, configured by
// only the backend, its address and the namespace (no plan).
func TestAdminVerbsOnSQLite(t *testing.T) {
	ctx := context.Background()
	s := adminSQLite(t)
	// Other namespaces' unknown records, older (by lease expiry) than po-1's.
	for _, k := range []string{"ordersother:po-2", "billing:po-3", "orders:po-1"} {
		lease := time.Duration(0)
		if k == "orders:po-1" {
			lease = time.Minute
		}
		r, err := s.Claim(ctx, gate.ClaimRequest{Key: k, Token: "t", Owner: "w1", Lease: lease})
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := s.MarkUnknown(ctx, k, r.Record.Fence); !ok || err != nil {
			t.Fatalf("MarkUnknown(%s): %v %v", k, ok, err)
		}
	}
	// Marked unknown within its lease, which has not ended yet (0s ago). Only
	// the namespace's key is listed, as resolve and inspect take it.
	if out, err := run(t, "unresolved"); err != nil || !strings.HasPrefix(out, "po-1\tfence 1") || !strings.Contains(out, "lease ended 0s ago") || !strings.HasSuffix(out, "\n1 unresolved\n") {
		t.Fatalf("unresolved: %v\n%s", err, out)
	}
	if out, err := run(t, "unresolved", "--json"); err != nil || !strings.Contains(out, `"key": "po-1"`) || strings.Contains(out, "po-2") || !strings.Contains(out, `"status": "unknown"`) {
		t.Fatalf("unresolved --json: %v\n%s", err, out)
	}
	if out, err := run(t, "unresolved", "--raw"); err != nil || !strings.Contains(out, "orders:po-1\t") || !strings.Contains(out, "ordersother:po-2\t") || !strings.Contains(out, "3 unresolved") {
		t.Fatalf("unresolved --raw: %v\n%s", err, out)
	}
	if out, err := run(t, "unresolved", "--limit", "1"); err != nil || !strings.HasPrefix(out, "po-1\t") || !strings.Contains(out, "1 unresolved") {
		t.Fatalf("unresolved --limit 1 (the other namespaces' first): %v\n%s", err, out)
	}
	out, err := run(t, "inspect", "po-1")
	if err != nil || !strings.Contains(out, "state        unknown") || !strings.Contains(out, "status       unknown: ") {
		t.Fatalf("inspect: %v\n%s", err, out)
	}
	if strings.Contains(out, "level=") || strings.Contains(out, "opened the backend") {
		t.Fatalf("inspect logged without -v:\n%s", out)
	}
	if out, err := run(t, "-v", "inspect", "po-1"); err != nil || !strings.Contains(out, "opened the backend") {
		t.Fatalf("inspect -v logs nothing: %v\n%s", err, out)
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
	if out, err := run(t, "inspect", "absent", "--json"); err != nil || !strings.Contains(out, `"status": "absent"`) {
		t.Fatalf("inspect absent --json: %v\n%s", err, out)
	}
	if out, err := run(t, "advance-fence", "new-key", "--at-least", "5"); err != nil ||
		!strings.Contains(out, "orders:new-key had no record: created a free one") || !strings.Contains(out, "with fence 6") {
		t.Fatalf("advance-fence of a missing key: %v\n%s", err, out)
	}
	if out, err := run(t, "inspect", "new-key", "--json"); err != nil || !strings.Contains(out, `"status": "free"`) || !strings.Contains(out, `"fence": 5`) {
		t.Fatalf("inspect of an advanced missing key: %v\n%s", err, out)
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

// TestAdvanceFenceKeepsAClaimPossible: --at-least at or past the largest fence
// less one is refused naming the limit (the key would answer fence exhausted
// to every claim); at the limit, the next claim runs with the largest fence.
func TestAdvanceFenceKeepsAClaimPossible(t *testing.T) {
	ctx := context.Background()
	s := adminSQLite(t)
	limit := strconv.FormatInt(gate.MaxFence-1, 10)
	for _, n := range []int64{gate.MaxFence, gate.MaxFence + 1, 1<<63 - 1, 0, -1} {
		arg := strconv.FormatInt(n, 10)
		if out, err := run(t, "advance-fence", "k", "--at-least", arg); err == nil || !strings.Contains(err.Error(), limit) {
			t.Errorf("--at-least %s: %v, want a refusal naming %s\n%s", arg, err, limit, out)
		}
	}
	if _, found, err := s.Inspect(ctx, "orders:k"); err != nil || found {
		t.Fatalf("a refused advance wrote a record (found %v, %v)", found, err)
	}
	if out, err := run(t, "advance-fence", "k", "--at-least", limit); err != nil || !strings.Contains(out, "with fence "+strconv.FormatInt(gate.MaxFence, 10)) {
		t.Fatalf("--at-least %s: %v\n%s", limit, err, out)
	}
	res, err := s.Claim(ctx, gate.ClaimRequest{Key: "orders:k", Token: "t", Lease: time.Minute, TTL: time.Hour})
	if err != nil || res.Status != gate.Won || res.Record.Fence != gate.MaxFence {
		t.Fatalf("claim after the advance = %v fence %d, %v; want won at %d", res.Status, res.Record.Fence, err, gate.MaxFence)
	}
}

func TestBadEnvironmentNamesTheVariable(t *testing.T) {
	t.Setenv("ONCEGATE_BACKEND", "sql")
	t.Setenv("ONCEGATE_NAMESPACE", "orders")
	t.Setenv("ONCEGATE_TTL", "sixty")
	t.Setenv("ONCEGATE_SQL_DSN", "sqlite:"+filepath.Join(t.TempDir(), "x.db"))
	if _, err := run(t, "unresolved"); err == nil || !strings.Contains(err.Error(), "ONCEGATE_TTL") {
		t.Fatalf("err = %v, want one naming ONCEGATE_TTL", err)
	}
	t.Setenv("ONCEGATE_TTL", "")
	t.Setenv("ONCEGATE_BACKEND", "")
	if _, err := run(t, "inspect", "k"); err == nil || !strings.Contains(err.Error(), "ONCEGATE_BACKEND") {
		t.Fatalf("err = %v, want one naming ONCEGATE_BACKEND", err)
	}
}

// TestInspectStatus pins the status words inspect gives each record.
func TestInspectStatus(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		r    gate.Record
		want Status
	}{
		{gate.Record{State: gate.StateClaimed, LeaseExpiry: now.Add(time.Second)}, StatusHeld},
		{gate.Record{State: gate.StateClaimed, LeaseExpiry: now}, StatusFree},
		{gate.Record{State: gate.StateClaimed, LeaseExpiry: now.Add(-time.Minute)}, StatusFree},
		{gate.Record{State: gate.StateDone}, StatusDone},
		{gate.Record{State: gate.StateFailed}, StatusFailed},
		{gate.Record{State: gate.StateUnknown}, StatusUnknown},
	} {
		if got := statusOf(tc.r, now); got != tc.want {
			t.Errorf("statusOf(%+v) = %s, want %s", tc.r, got, tc.want)
		}
	}
}

// TestBridgeSaysTheEmulatorDoesNotAnswer points the bridge at a port nobody
// listens on: it must give up within --dial-timeout with a clear error.
func TestBridgeSaysTheEmulatorDoesNotAnswer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := l.Addr().String()
	l.Close()
	t.Setenv("PUBSUB_EMULATOR_HOST", host)
	start := time.Now()
	_, err = run(t, "bridge", "--project", "demo", "--subscription", "orders-push", "--dial-timeout", "1s")
	if !errors.Is(err, localpubsub.ErrNoAnswer) || !strings.Contains(err.Error(), "does not answer within 1s") ||
		!strings.Contains(err.Error(), "gcloud beta emulators pubsub start --host-port="+host) {
		t.Fatalf("err = %v; want one saying the emulator at %s does not answer and how to start it", err, host)
	}
	if el := time.Since(start); el > 30*time.Second {
		t.Fatalf("gave up after %s; want about the 1s dial timeout", el)
	}
}

// TestDemoRefusesSize checks that demo refuses --orders and --workers out of
// range, an explicit 0 included, naming the flag and the range, before it
// starts anything.
func TestDemoRefusesSize(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--orders", "0"}, "--orders 0: want 2 or more (one order is the poison message"},
		{[]string{"--orders", "-5"}, "--orders -5: want 2 or more"},
		{[]string{"--orders", "1"}, "--orders 1: want 2 or more"},
		{[]string{"--workers", "0"}, "--workers 0: want 1 or more"},
		{[]string{"--workers", "-2"}, "--workers -2: want 1 or more"},
	} {
		out, err := run(t, append([]string{"demo"}, tt.args...)...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(out, "oncegate demo:") {
			t.Errorf("demo %v: err %v, want %q and nothing run:\n%s", tt.args, err, tt.want, out)
		}
	}
}
