package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/oncegate/oncegate/examples/cloudrun/worker"
)

func newWorkerCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "worker",
		Short: "Run the reference worker (configured only from the environment)",
		Long: `worker runs the reference worker of examples/cloudrun: Pub/Sub push on "/" on $PORT,
forwarding each message's data to $SUPPLIER_URL with Idempotency-Key and
X-Fencing-Token headers, configured by the ONCEGATE_* environment contract.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return worker.Main(cmd.Context(), os.Getenv, os.Stderr)
		},
	}
}
