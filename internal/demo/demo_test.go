package demo_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/oncegate/oncegate/internal/demo"
	"github.com/oncegate/oncegate/internal/worker"
)

// TestMain lets the test binary double as the reference worker, so the demo's
// workers are real processes that can be killed.
func TestMain(m *testing.M) {
	if os.Getenv("ONCEGATE_DEMO_TEST_WORKER") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		if err := worker.Main(ctx, os.Getenv, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestDemoSmallRunIsExactlyOnce(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep, err := demo.Run(context.Background(), demo.Options{
		Orders: 60, Seed: 7, Out: &out,
		WorkerCommand: []string{exe, "-test.run=^$"},
		WorkerEnv:     []string{"ONCEGATE_DEMO_TEST_WORKER=1"},
		Getenv:        func(string) string { return "" }, // the embedded default: SQLite
	})
	t.Log(out.String())
	if err != nil {
		t.Fatalf("demo: %v", err)
	}
	if !rep.OK() || rep.SupplierOrders != rep.DistinctOrders || rep.DistinctOrders != 59 {
		t.Fatalf("report = %+v; want 59 distinct orders, each exactly once", rep)
	}
	if rep.DeadLettered != 1 || rep.Kills != 1 || rep.Duplicates == 0 || rep.Published <= rep.DistinctOrders {
		t.Fatalf("report = %+v; want the poison order dead-lettered, one kill, and duplicates skipped", rep)
	}
	if !strings.Contains(out.String(), "OK: every distinct order reached the supplier exactly once") {
		t.Fatal("the report does not state the verdict")
	}
}

func TestReportOK(t *testing.T) {
	for _, tc := range []struct {
		r    demo.Report
		want bool
	}{
		{demo.Report{DistinctOrders: 3, SupplierOrders: 3}, true},
		{demo.Report{DistinctOrders: 3, SupplierOrders: 3, SupplierDuplicates: 1}, false},
		{demo.Report{DistinctOrders: 3, SupplierOrders: 2, Missing: 1}, false},
		{demo.Report{DistinctOrders: 3, SupplierOrders: 4}, false},
		{demo.Report{DistinctOrders: 3, SupplierOrders: 3, Crashed: 1}, false},
	} {
		if got := tc.r.OK(); got != tc.want {
			t.Errorf("%+v.OK() = %v, want %v", tc.r, got, tc.want)
		}
	}
}
