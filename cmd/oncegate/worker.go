package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/oncegate/oncegate/examples/cloudrun/worker"
)

func newWorkerCmd() *cobra.Command {
	var pullMode bool
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run the reference worker (configured only from the environment)",
		Long: `worker runs the reference worker of examples/cloudrun: Pub/Sub push on "/" on $PORT,
forwarding each message's data to $SUPPLIER_URL with Idempotency-Key and
X-Fencing-Token headers, configured by the ONCEGATE_* environment contract.

With --pull it is a pull subscriber instead (examples/pullworker): it receives
from $ONCEGATE_PULL_SUBSCRIPTION in $GOOGLE_CLOUD_PROJECT with the receive
settings the ONCEGATE_PULL_* plan sized, and on SIGTERM stops receiving and
lets running bodies finish within $ONCEGATE_PULL_DRAIN.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if pullMode {
				return worker.PullMain(cmd.Context(), os.Getenv, os.Stderr)
			}
			return worker.Main(cmd.Context(), os.Getenv, os.Stderr)
		},
	}
	cmd.Flags().BoolVar(&pullMode, "pull", false, "run as a Pub/Sub pull subscriber (Subscriber.Receive) instead of a push endpoint")
	return cmd
}
