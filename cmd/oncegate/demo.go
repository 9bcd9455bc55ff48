package main

import (
	"github.com/spf13/cobra"

	"github.com/oncegate/oncegate/internal/demo"
)

func newDemoCmd() *cobra.Command {
	var o demo.Options
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the whole system locally and prove every order reaches the supplier exactly once",
		Long: `demo starts an in-process Pub/Sub fake with a subscription sized by the sizing model,
reference-worker processes sharing one backend (an SQLite file unless ONCEGATE_SQL_DSN
or ONCEGATE_REDIS_ADDR is set), a recording supplier and the push bridge. It publishes
orders with trouble mixed in (republished orders, transport redeliveries, concurrent
deliveries to two workers, a slow and a failing supplier, a worker killed with SIGKILL
and restarted, a poison order), then prints a report. It exits non-zero if any order is
duplicated or lost.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Out = cmd.OutOrStdout()
			_, err := demo.Run(cmd.Context(), o)
			return err
		},
	}
	cmd.Flags().IntVar(&o.Orders, "orders", 300, "distinct orders to publish")
	cmd.Flags().IntVar(&o.Workers, "workers", 3, "worker processes")
	cmd.Flags().Uint64Var(&o.Seed, "seed", 1, "seed of the trouble mix")
	cmd.Flags().BoolVar(&o.NoKill, "no-kill", false, "do not kill and restart a worker")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 0, "bound on the whole run (default 3m)")
	return cmd
}
