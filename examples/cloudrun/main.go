// Command cloudrun is the reference worker (docs/design.md, "The reference worker"):
// a Cloud Run service taking Pub/Sub push requests on "/" on $PORT and
// forwarding each message's data to $SUPPLIER_URL with Idempotency-Key and
// X-Fencing-Token headers, guarded by oncegate and configured only by the
// ONCEGATE_* environment contract. SIGTERM drains in-flight requests within the
// plan's shutdown grace (Cloud Run sends SIGKILL 10 s after SIGTERM). The code
// is in ./worker, on public packages only, so the demo and the end-to-end tests
// run exactly this worker.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/oncegate/oncegate/examples/cloudrun/worker"
)

func main() {
	if err := worker.Main(context.Background(), os.Getenv, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}
