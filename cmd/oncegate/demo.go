package main

import (
	"os"
	"strings"

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
or ONCEGATE_REDIS_ADDR is set), a supplier that honours Idempotency-Key and the push
bridge. It publishes orders with trouble mixed in (republished orders, transport
redeliveries, concurrent deliveries to two workers, a slow and a failing supplier, a
worker killed with SIGKILL and restarted, a poison order), then prints a report.

Each run uses a fresh namespace (printed), so runs on one database never meet. The
report counts the orders the supplier holds more than once (must be 0) and the raw
repeated calls; each repeat must be explained by the kill landing inside the window
between the supplier call and the done record, as in docs/RELIABILITY.md's crash storm
(a repeat after an unrecorded effect, a committed call whose worker then reported it
failed or unrecorded, is counted apart).
demo exits non-zero, naming the orders and why, if an order is held twice, lost, or
repeated without such a kill. --orders counts the poison order too (it is
dead-lettered), so the report's distinct orders are --orders minus one; it must be
2 or more. A run that hits --timeout ends INCOMPLETE, naming every order it still
waited for, and exits non-zero without judging them. A failed, timed-out or
interrupted run (--keep: every run) keeps the store and prints the oncegate inspect
command that reads it. On your own PostgreSQL or Redis every run's records stay
under its namespace, kept or not: Redis expires them after the demo plan's 30-minute
ttl, SQL keeps them until oncegate purge deletes them once expired.

--pubsub=emulator (the default when PUBSUB_EMULATOR_HOST is set) replaces the
embedded fake and the bridge with Google's Pub/Sub emulator pushing to the workers
itself, dead-letter policy included (Debian package google-cloud-cli-pubsub-emulator,
Java 17).

--pull runs the workers as pull subscribers (oncegate worker --pull) that receive
by streaming pull, from the embedded fake or the emulator, with the same orders,
supplier, kill and verdict; trouble the push demo injects as extra pushes is
published as extra copies of the order instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// An explicit 0 is refused too: Options reads 0 as the default.
			if err := demo.CheckSize(o.Orders, o.Workers); err != nil {
				return err
			}
			o.Out = cmd.OutOrStdout()
			o.CLI = cliName()
			_, err := demo.Run(cmd.Context(), o)
			return err
		},
	}
	cmd.Flags().IntVar(&o.Orders, "orders", demo.DefaultOrders, "orders to publish, 2 or more: one is the poison message (dead-lettered), so n orders are n−1 distinct orders")
	cmd.Flags().IntVar(&o.Workers, "workers", demo.DefaultWorkers, "worker processes, 1 or more")
	cmd.Flags().Uint64Var(&o.Seed, "seed", 1, "seed of the trouble mix")
	cmd.Flags().StringVar(&o.PubSub, "pubsub", "", "embedded (pstest and the push bridge; needs only Go) or emulator (Google's emulator pushing: $PUBSUB_EMULATOR_HOST, or one the demo starts); default emulator when PUBSUB_EMULATOR_HOST is set, else embedded")
	cmd.Flags().BoolVar(&o.Pull, "pull", false, "run the workers as pull subscribers (worker --pull: streaming pull from a pull subscription) instead of push endpoints")
	cmd.Flags().BoolVar(&o.NoKill, "no-kill", false, "do not kill and restart a worker")
	cmd.Flags().BoolVar(&o.Keep, "keep", false, "keep the store after the run and print how to inspect it")
	cmd.Flags().StringVar(&o.Namespace, "namespace", "", "key namespace (default: a fresh demo-<time>-<hex> per run)")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 0, "bound on the whole run (default 3m)")
	return cmd
}

// cliName is how a printed command should invoke this CLI: "go run
// ./cmd/oncegate" when it runs from go run's build cache, else "oncegate".
func cliName() string {
	if exe, err := os.Executable(); err == nil && strings.Contains(exe, "go-build") {
		return "go run ./cmd/oncegate"
	}
	return "oncegate"
}
