package pullstorm_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/oncegate/oncegate/examples/cloudrun/worker"
	"github.com/oncegate/oncegate/internal/testenv"
)

// envWorker makes the test binary run as a pull worker instead of the tests:
// the storm starts its workers as `<test binary> -test.run=^$` with
// ONCEGATE_PULL_E2E_WORKER=1, so they are real processes SIGKILL can crash.
const envWorker = "ONCEGATE_PULL_E2E_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(envWorker) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		err := worker.PullMain(ctx, os.Getenv, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "pull worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	testenv.Main(m)
}
