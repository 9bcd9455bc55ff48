package demo_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oncegate/oncegate/examples/cloudrun/worker"
	"github.com/oncegate/oncegate/internal/demo"
	"github.com/oncegate/oncegate/internal/testenv"
)

// TestMain lets the test binary double as the reference worker, so the demo's
// workers are real processes that can be killed.
func TestMain(m *testing.M) {
	if os.Getenv("ONCEGATE_DEMO_TEST_WORKER") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		run := worker.Main
		if os.Getenv("ONCEGATE_PULL_SUBSCRIPTION") != "" { // the demo's --pull workers
			run = worker.PullMain
		}
		if err := run(ctx, os.Getenv, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	testenv.Main(m)
}

// runDemo runs the demo with this test binary as the worker, on the embedded
// SQLite default, and logs its output.
func runDemo(t *testing.T, o demo.Options, workerEnv ...string) (demo.Report, string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	o.Out = &out
	o.WorkerCommand = []string{exe, "-test.run=^$"}
	o.WorkerEnv = append([]string{"ONCEGATE_DEMO_TEST_WORKER=1"}, workerEnv...)
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	rep, err := demo.Run(context.Background(), o)
	t.Log(out.String())
	if rep.StoreDir != "" {
		t.Cleanup(func() { _ = os.RemoveAll(rep.StoreDir) })
	}
	return rep, out.String(), err
}

// checkExactlyOnce checks a run that must pass: every order held once, the
// poison order dead-lettered, one kill.
func checkExactlyOnce(t *testing.T, rep demo.Report, out string, err error, orders int) {
	t.Helper()
	if err != nil {
		t.Fatalf("demo: %v", err)
	}
	if !rep.OK() || rep.SupplierOrders != orders-1 || rep.DistinctOrders != orders-1 || rep.HeldMoreThanOnce != 0 || rep.UnexplainedRepeats != 0 {
		t.Fatalf("report = %+v; want %d distinct orders, each held once, no unexplained repeat", rep, orders-1)
	}
	if rep.DeadLettered != 1 || rep.Kills != 1 || rep.Duplicates == 0 || rep.Published <= rep.DistinctOrders {
		t.Fatalf("report = %+v; want the poison order dead-lettered, one kill, and duplicates skipped", rep)
	}
	if !strings.Contains(out, "OK: every distinct order reached the supplier exactly once") ||
		!strings.Contains(out, "namespace "+rep.Namespace) || !strings.HasPrefix(rep.Namespace, "demo-") {
		t.Fatal("the report does not state the verdict and the run's fresh namespace")
	}
}

func TestDemoSmallRunIsExactlyOnce(t *testing.T) {
	rep, out, err := runDemo(t, demo.Options{Orders: 60, Seed: 7})
	checkExactlyOnce(t, rep, out, err, 60)
}

// TestDemoDefault runs what the README's first command runs: 300 orders with
// the default seed, then with a random one (logged, so a failure can be
// replayed with --seed).
func TestDemoDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the default demo takes about 20 s per seed")
	}
	for _, seed := range []uint64{1, rand.Uint64N(1 << 32)} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rep, out, err := runDemo(t, demo.Options{Seed: seed})
			checkExactlyOnce(t, rep, out, err, 300)
		})
	}
}

// TestDemoOnEmulator runs the demo with PUBSUB_EMULATOR_HOST set, which picks
// the emulator's own push (no bridge): the same verdict must hold.
func TestDemoOnEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the emulator demo takes about 45 s")
	}
	host := testenv.PubSubEmulator(t)
	rep, out, err := runDemo(t, demo.Options{Orders: 60, Seed: 7, Getenv: func(k string) string {
		if k == "PUBSUB_EMULATOR_HOST" {
			return host
		}
		return ""
	}})
	checkExactlyOnce(t, rep, out, err, 60)
	if !strings.Contains(out, "pubsub emulator (its own push") {
		t.Fatal("PUBSUB_EMULATOR_HOST did not select the emulator's push")
	}
	if !strings.Contains(out, "no retry policy (the emulator redelivers a refused push after about 1s)") || strings.Contains(out, "backoff") {
		t.Fatal("the plan line does not say the emulator's subscription has no retry policy")
	}
}

// TestDemoPull runs the demo with pull workers (--pull) on the embedded pstest,
// which the workers reach by streaming pull: the same orders, the same kill,
// the same verdict. 60 orders keep it short on a loaded machine; the run's
// bound is the default 3 minutes.
func TestDemoPull(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the pull demo takes about 30 s")
	}
	rep, out, err := runDemo(t, demo.Options{Orders: 60, Seed: 7, Pull: true})
	checkExactlyOnce(t, rep, out, err, 60)
	if !rep.Pull || !strings.Contains(out, "streaming pull by the workers") || !strings.Contains(out, "deliveries (pull)") {
		t.Fatal("--pull did not run pull workers, or the report does not say so")
	}
}

// TestDemoPullOnEmulator runs --pull with PUBSUB_EMULATOR_HOST set: the
// workers pull from Google's emulator.
func TestDemoPullOnEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the emulator demo takes about 45 s")
	}
	host := testenv.PubSubEmulator(t)
	rep, out, err := runDemo(t, demo.Options{Orders: 60, Seed: 7, Pull: true, Getenv: func(k string) string {
		if k == "PUBSUB_EMULATOR_HOST" {
			return host
		}
		return ""
	}})
	checkExactlyOnce(t, rep, out, err, 60)
	if !strings.Contains(out, "pubsub emulator (streaming pull by the workers)") {
		t.Fatal("PUBSUB_EMULATOR_HOST with --pull did not select the emulator")
	}
	if !strings.Contains(out, "no retry policy (the emulator redelivers a nacked message at once)") || strings.Contains(out, "backoff") {
		t.Fatal("the plan line does not say the emulator's subscription has no retry policy")
	}
}

// TestPullPlanIsSafe checks the pull demo's plan passes the pull sizing check
// (the workers refuse an unsafe one at start-up) and keeps the push plan's
// numbers.
func TestPullPlanIsSafe(t *testing.T) {
	p := demo.PullPlan()
	if err := p.Validate(); err != nil {
		t.Fatalf("demo.PullPlan: %v", err)
	}
	push := demo.Plan()
	if p.Lease != push.Lease || p.WorkDeadline != push.WorkDeadline || p.AckDeadline != push.AckDeadline || p.StoreTimeout != push.StoreTimeout {
		t.Fatalf("pull plan %+v drifted from the push plan %+v", p.Plan, push)
	}
}

// TestDemoFailsWithDoubleRunningWorker runs the demo with workers that skip the
// claim (ONCEGATE_DISABLED=1: every delivery runs unguarded), so republished
// and redelivered orders really run twice: the verdict must fail and name the
// repeated orders, though the idempotent supplier holds each order once.
func TestDemoFailsWithDoubleRunningWorker(t *testing.T) {
	rep, out, err := runDemo(t, demo.Options{Orders: 60, Seed: 7, NoKill: true, Keep: true}, "ONCEGATE_DISABLED=1")
	if err == nil || rep.OK() {
		t.Fatalf("a double-running worker passed the demo: %+v", rep)
	}
	if rep.UnexplainedRepeats == 0 || len(rep.Problems) == 0 {
		t.Fatalf("report = %+v; want unexplained repeats, each named", rep)
	}
	if !strings.Contains(out, "problem: "+rep.Problems[0].Order+" called the supplier again") || !strings.Contains(out, "FAILED") {
		t.Fatalf("the output does not name the repeated order %s", rep.Problems[0].Order)
	}
	if !strings.Contains(out, "ONCEGATE_NAMESPACE="+rep.Namespace+" oncegate inspect "+rep.Problems[0].Order) {
		t.Fatal("a failed run does not print the command that inspects the failed order")
	}
}

// TestDemoInterrupted cancels the run as Ctrl-C does: it says "interrupted",
// gives no verdict and keeps the store.
func TestDemoInterrupted(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuilder
	out.onWrite = func(s string) {
		if strings.Contains(s, "acked") {
			cancel()
		}
	}
	rep, err := demo.Run(ctx, demo.Options{Orders: 60, Seed: 7, Out: &out, WorkerCommand: []string{exe, "-test.run=^$"},
		WorkerEnv: []string{"ONCEGATE_DEMO_TEST_WORKER=1"}, Getenv: func(string) string { return "" }, Timeout: 2 * time.Minute})
	t.Log(out.String())
	if rep.StoreDir != "" {
		t.Cleanup(func() { _ = os.RemoveAll(rep.StoreDir) })
	}
	if err != demo.ErrInterrupted {
		t.Fatalf("err = %v, want demo.ErrInterrupted", err)
	}
	s := out.String()
	if !strings.Contains(s, "interrupted: no verdict") || strings.Contains(s, "FAILED") || strings.Contains(s, "timed out") {
		t.Fatal("an interrupted run must say so, without a verdict or a timeout")
	}
	if !strings.Contains(s, "store kept") {
		t.Fatal("an interrupted run must keep the store")
	}
}

// TestDemoTimesOut runs the demo with a timeout shorter than its slow orders
// (their first call outlasts the ack deadline): the run must say it is
// incomplete, list every order it waited for, not blame the guarantees, keep
// the store and still fail.
func TestDemoTimesOut(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the run takes its 12 s timeout")
	}
	rep, out, err := runDemo(t, demo.Options{Orders: 60, Seed: 7, NoKill: true, Timeout: 12 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "timed out after 12s") {
		t.Fatalf("err = %v, want a timeout", err)
	}
	var msgs, orders int
	var mw, ow string
	if _, e := fmt.Sscanf(rep.Incomplete, "timed out after 12s waiting for %d %s of %d %s", &msgs, &mw, &orders, &ow); e != nil {
		t.Fatalf("Incomplete = %q: %v", rep.Incomplete, e)
	}
	if len(rep.Problems) != orders {
		t.Errorf("the verdict counts %d orders but lists %d problems: %+v", orders, len(rep.Problems), rep.Problems)
	}
	if !strings.Contains(out, "INCOMPLETE: "+rep.Incomplete+"; raise --timeout") || strings.Contains(out, "FAILED") || strings.Contains(out, "lost orders") {
		t.Error("a timed-out run must say INCOMPLETE and why, without FAILED or lost orders")
	}
	if !strings.Contains(out, "store kept") {
		t.Error("a timed-out run must keep the store")
	}
}

// TestDemoRefusesSize checks that Run refuses an order or worker count out
// of range before starting anything (0 is the default in Options; the CLI
// refuses an explicit 0).
func TestDemoRefusesSize(t *testing.T) {
	for _, o := range []demo.Options{{Orders: 1}, {Orders: -5}, {Workers: -1}} {
		var out strings.Builder
		o.Out = &out
		if _, err := demo.Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "or more") || out.Len() != 0 {
			t.Errorf("Run(orders %d, workers %d) = %v, output %q; want a range error and nothing run", o.Orders, o.Workers, err, out.String())
		}
	}
}

// TestDemoUnreachableEmulatorKeepsNothing: a run whose set-up fails (no
// emulator at PUBSUB_EMULATOR_HOST) wrote no record, so it must not offer to
// inspect one.
func TestDemoUnreachableEmulatorKeepsNothing(t *testing.T) {
	rep, out, err := runDemo(t, demo.Options{Orders: 10, Timeout: time.Minute, Getenv: func(k string) string {
		if k == "PUBSUB_EMULATOR_HOST" {
			return "127.0.0.1:1"
		}
		return ""
	}})
	if err == nil || !strings.Contains(err.Error(), "--pubsub=emulator") {
		t.Fatalf("err = %v, want the emulator connection error", err)
	}
	if strings.Contains(out, "store kept") || strings.Contains(out, "inspect") || rep.StoreDir != "" {
		t.Fatalf("a run that never started offers a store to inspect (dir %q):\n%s", rep.StoreDir, out)
	}
}

func TestReportOK(t *testing.T) {
	for _, tc := range []struct {
		r    demo.Report
		want bool
	}{
		{demo.Report{DistinctOrders: 3, SupplierOrders: 3}, true},
		{demo.Report{DistinctOrders: 3, SupplierOrders: 3, Repeats: 1, ExplainedRepeats: 1}, true},
		{demo.Report{DistinctOrders: 3, SupplierOrders: 3, Repeats: 1, UnrecordedRepeats: 1}, true},
		{demo.Report{DistinctOrders: 3, SupplierOrders: 3, HeldMoreThanOnce: 1}, false},
		{demo.Report{DistinctOrders: 3, SupplierOrders: 3, Repeats: 1, UnexplainedRepeats: 1}, false},
		{demo.Report{DistinctOrders: 3, SupplierOrders: 2, Missing: 1}, false},
		{demo.Report{DistinctOrders: 3, SupplierOrders: 4}, false},
		{demo.Report{DistinctOrders: 3, SupplierOrders: 3, Crashed: 1}, false},
		{demo.Report{DistinctOrders: 3, SupplierOrders: 3, Incomplete: "timed out"}, false},
	} {
		if got := tc.r.OK(); got != tc.want {
			t.Errorf("%+v.OK() = %v, want %v", tc.r, got, tc.want)
		}
	}
}
