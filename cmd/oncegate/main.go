// Command oncegate is the project's CLI: sizing check, local push bridge,
// record inspection and reconciliation, the reference worker, and the local
// end-to-end demo. Run `oncegate help` for the verbs.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "oncegate:", err)
		os.Exit(1)
	}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "oncegate",
		Short:         "Exactly-once processing for at-least-once Pub/Sub push",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().BoolP("verbose", "v", false, "log what the command does (to stderr)")
	root.AddCommand(newSizingCmd(), newBridgeCmd(), newDemoCmd(), newWorkerCmd(),
		newInspectCmd(), newUnresolvedCmd(), newResolveCmd(), newAdvanceFenceCmd(), newPurgeCmd(), newTTLCmd())
	return root
}

// cmdLogger is the admin verbs' logger: silent unless -v.
func cmdLogger(cmd *cobra.Command) *slog.Logger {
	if v, _ := cmd.Flags().GetBool("verbose"); v {
		return slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
