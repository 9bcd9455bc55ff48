package e2e_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"github.com/oncegate/oncegate/examples/cloudrun/worker"
	"github.com/oncegate/oncegate/internal/testenv"
)

// envWorker makes the test binary run as a reference worker instead of the
// tests: the suite starts its workers as `<test binary> -test.run=^$` with
// ONCEGATE_E2E_WORKER=1, so they are real processes that SIGKILL can crash,
// built from the same code as examples/cloudrun without a separate go build.
const envWorker = "ONCEGATE_E2E_WORKER"

// parallelBackends is the -test.parallel the suite sets when the flag is not
// given: one subtest per backend at a time. The scenarios mostly wait on
// backoff timers in worker processes, so running the four backends together
// costs little CPU; the default (GOMAXPROCS, 2 here) would run them in two
// waves.
const parallelBackends = 4

func TestMain(m *testing.M) {
	if os.Getenv(envWorker) != "1" {
		flag.Parse()
		set := false
		flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
		if !set {
			_ = flag.Set("test.parallel", strconv.Itoa(max(parallelBackends, runtime.GOMAXPROCS(0))))
		}
	}
	if os.Getenv(envWorker) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		err := worker.Main(ctx, os.Getenv, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	testenv.Main(m)
}
