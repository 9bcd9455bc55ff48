package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"
)

// withBackend opens the backend the ONCEGATE_* environment names, checks that it
// has capability T (what says which, for the error) and calls fn with both.
func withBackend[T any](ctx context.Context, what string, fn func(cfg *gateenv.Config, b T) error) error {
	cfg, err := gateenv.New(ctx, &gateenv.Options{Getenv: os.Getenv, NoPush: true})
	if err != nil {
		return fmt.Errorf("configure from the environment: %w", err)
	}
	defer cfg.Close()
	b, ok := cfg.Backend.(T)
	if !ok {
		return fmt.Errorf("backend %s cannot %s", cfg.BackendName, what)
	}
	return fn(cfg, b)
}

func storedKey(cfg *gateenv.Config, key string, raw bool) string {
	if raw || cfg.Gate.Namespace == "" {
		return key
	}
	return cfg.Gate.Namespace + ":" + key
}

func printRecord(cmd *cobra.Command, r gate.Record) {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "key          %s\nstate        %s\nfence        %d\nowner        %s\n", r.Key, r.State, r.Fence, r.Owner)
	fmt.Fprintf(w, "lease expiry %s\n", fmtTime(r.LeaseExpiry))
	fmt.Fprintf(w, "expires at   %s\n", fmtTime(r.ExpiresAt))
	if !r.DoneAt.IsZero() {
		fmt.Fprintf(w, "done at      %s\n", fmtTime(r.DoneAt))
	}
	fmt.Fprintf(w, "result       %d bytes\n", len(r.Result))
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func newInspectCmd() *cobra.Command {
	var raw bool
	cmd := &cobra.Command{
		Use:   "inspect KEY",
		Short: "Show a key's record (backend from the ONCEGATE_* environment)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withBackend(cmd.Context(), "inspect records", func(cfg *gateenv.Config, in gate.Inspector) error {
				r, ok, err := in.Inspect(cmd.Context(), storedKey(cfg, args[0], raw))
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("inspect %q: %w", args[0], gate.ErrNotFound)
				}
				printRecord(cmd, r)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&raw, "raw", false, "KEY is the stored key (do not prefix ONCEGATE_NAMESPACE)")
	return cmd
}

func newUnresolvedCmd() *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "unresolved",
		Short: "List records whose outcome is unknown, oldest first, with their age",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withBackend(cmd.Context(), "list unresolved records", func(cfg *gateenv.Config, l gate.UnresolvedLister) error {
				rs, err := l.ListUnresolved(cmd.Context(), limit)
				if err != nil {
					return err
				}
				for _, r := range rs {
					// The claim was made a lease before its lease expiry; the
					// record turned unknown after that.
					age := max(time.Since(r.LeaseExpiry.Add(-cfg.Plan.Lease)), 0).Truncate(time.Second)
					fmt.Fprintf(cmd.OutOrStdout(), "%s\tfence %d\towner %s\tage %s\n", r.Key, r.Fence, r.Owner, age)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%d unresolved\n", len(rs))
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 100, "at most this many (0: all)")
	return cmd
}

func newResolveCmd() *cobra.Command {
	var done, retry, raw bool
	cmd := &cobra.Command{
		Use:   "resolve KEY (--done | --retry)",
		Short: "Resolve an unknown record: the effect happened (--done) or must run again (--retry)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if done == retry {
				return errors.New("resolve: give exactly one of --done (the effect happened) or --retry (run it again)")
			}
			return withBackend(cmd.Context(), "resolve records", func(cfg *gateenv.Config, rs gate.Resolver) error {
				key := storedKey(cfg, args[0], raw)
				if err := rs.Resolve(cmd.Context(), key, done, cfg.Plan.TTL); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "resolved %s as %s\n", key, map[bool]string{true: "done", false: "retry"}[done])
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&done, "done", false, "the effect happened: record the key done")
	cmd.Flags().BoolVar(&retry, "retry", false, "the effect did not happen: let the next delivery run it")
	cmd.Flags().BoolVar(&raw, "raw", false, "KEY is the stored key (do not prefix ONCEGATE_NAMESPACE)")
	return cmd
}

func newAdvanceFenceCmd() *cobra.Command {
	var atLeast int64
	var raw bool
	cmd := &cobra.Command{
		Use:   "advance-fence KEY --at-least N",
		Short: "Raise a key's fence to at least N (after a store lost data); never lowers it",
		Long: `advance-fence moves KEY's fencing token to at least N, so the next claim gets a token
above every token handed out before the store lost data (a Redis failover without
persistence, a restored backup). Read N from your fenced sinks: the highest fence they
accepted for the key. It never lowers a fence, so running it twice is harmless.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if atLeast < 1 {
				return errors.New("advance-fence: --at-least must be a fence of 1 or more")
			}
			return withBackend(cmd.Context(), "advance fences", func(cfg *gateenv.Config, a gate.FenceAdvancer) error {
				key := storedKey(cfg, args[0], raw)
				f, err := a.AdvanceFence(cmd.Context(), key, atLeast, cfg.Plan.TTL)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s fence %d; the next claim gets %d\n", key, f, f+1)
				return nil
			})
		},
	}
	cmd.Flags().Int64Var(&atLeast, "at-least", 0, "the fence to reach (required)")
	cmd.Flags().BoolVar(&raw, "raw", false, "KEY is the stored key (do not prefix ONCEGATE_NAMESPACE)")
	_ = cmd.MarkFlagRequired("at-least")
	return cmd
}

func newPurgeCmd() *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "purge",
		Short: "Delete records past expires_at (never a live claim or an unknown record)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withBackend(cmd.Context(), "purge records", func(_ *gateenv.Config, p gate.Purger) error {
				n, err := p.Purge(cmd.Context(), limit)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "purged %d records\n", n)
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many (0: all)")
	return cmd
}
