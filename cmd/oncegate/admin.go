package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"

	// The admin commands open whichever backend ONCEGATE_BACKEND names.
	_ "github.com/oncegate/oncegate/runtime/gateenv/allbackends"
)

// withBackend opens the backend the ONCEGATE_* environment names (only
// ONCEGATE_BACKEND, its address variables and ONCEGATE_NAMESPACE are needed),
// checks that it is a T (gate.Backend, or gate.Admin for the operator's verbs;
// what says which, for the error, which wraps errors.ErrUnsupported) and calls
// fn with both.
func withBackend[T any](cmd *cobra.Command, what string, fn func(cfg *gateenv.Config, b T) error) error {
	cfg, err := gateenv.NewAdmin(cmd.Context(), &gateenv.Options{Getenv: os.Getenv, Logger: cmdLogger(cmd)})
	if err != nil {
		return fmt.Errorf("configure from the environment: %w", err)
	}
	defer cfg.Close()
	b, ok := cfg.Backend.(T)
	if !ok {
		return fmt.Errorf("backend %s cannot %s: %w", cfg.BackendName, what, errors.ErrUnsupported)
	}
	return fn(cfg, b)
}

func storedKey(cfg *gateenv.Config, key string, raw bool) string {
	if raw || cfg.Gate.Namespace == "" {
		return key
	}
	return cfg.Gate.Namespace + ":" + key
}

// Status is what inspect says about a key: whether a delivery of it now
// would run, wait or be refused.
type Status string

const (
	StatusHeld    Status = "held"    // claimed and the lease is live: a delivery waits (503)
	StatusFree    Status = "free"    // released, or the lease lapsed: the next claim runs it, fence + 1
	StatusDone    Status = "done"    // recorded done: a delivery is a duplicate until expires_at
	StatusFailed  Status = "failed"  // recorded failed permanently until expires_at
	StatusUnknown Status = "unknown" // the outcome was not recorded: refused until resolved
	StatusAbsent  Status = "absent"  // no record: the next claim runs it with fence 1
)

// statusOf judges r at now (this machine's clock; the store's may differ a
// little, so a lease within a second of now is borderline).
func statusOf(r gate.Record, now time.Time) Status {
	switch r.State {
	case gate.StateClaimed:
		if r.LeaseLive(now) {
			return StatusHeld
		}
		return StatusFree
	case gate.StateDone:
		return StatusDone
	case gate.StateFailed:
		return StatusFailed
	}
	return StatusUnknown
}

var statusWords = map[Status]string{
	StatusHeld:    "held: a holder's lease is live; a delivery now waits (503)",
	StatusFree:    "free: released or lapsed; the next claim runs it with fence + 1",
	StatusDone:    "done: a delivery now is a duplicate (204) until expires at",
	StatusFailed:  "failed: recorded as a permanent failure until expires at",
	StatusUnknown: "unknown: the outcome was not recorded; refused until `oncegate resolve`",
}

// recordJSON is inspect --json's object.
type recordJSON struct {
	Key         string     `json:"key"`
	Status      Status     `json:"status"`
	State       string     `json:"state"`
	Fence       int64      `json:"fence"`
	Owner       string     `json:"owner"`
	LeaseExpiry *time.Time `json:"lease_expiry"`
	ExpiresAt   *time.Time `json:"expires_at"`
	DoneAt      *time.Time `json:"done_at"`
	ResultBytes int        `json:"result_bytes"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

func toJSON(r gate.Record, now time.Time) recordJSON {
	return recordJSON{Key: r.Key, Status: statusOf(r, now), State: string(r.State), Fence: r.Fence, Owner: r.Owner,
		LeaseExpiry: timePtr(r.LeaseExpiry), ExpiresAt: timePtr(r.ExpiresAt), DoneAt: timePtr(r.DoneAt), ResultBytes: len(r.Result)}
}

func writeJSON(cmd *cobra.Command, v any) error {
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printRecord(cmd *cobra.Command, r gate.Record, now time.Time) {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "key          %s\nstatus       %s\nstate        %s\nfence        %d\nowner        %s\n",
		r.Key, statusWords[statusOf(r, now)], r.State, r.Fence, r.Owner)
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
	var raw, asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect KEY",
		Short: "Show a key's record and whether it is held, free, done, failed or unknown",
		Long: `inspect reads KEY's record without changing it. It needs only ONCEGATE_BACKEND, the
backend's address (ONCEGATE_SQL_DSN, ONCEGATE_REDIS_ADDR or GOOGLE_CLOUD_PROJECT) and
ONCEGATE_NAMESPACE. The status says what a delivery of the key would meet now: held (a
live lease), free (released or lapsed), done, failed or unknown; a key with no record
is an error (exit 1), or {"key": …, "status": "absent"} with --json.`,
		Args: oneKey,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withBackend(cmd, "inspect records", func(cfg *gateenv.Config, in gate.Backend) error {
				key := storedKey(cfg, args[0], raw)
				r, ok, err := in.Inspect(cmd.Context(), key)
				if err != nil {
					return err
				}
				switch {
				case !ok && asJSON:
					return writeJSON(cmd, map[string]any{"key": key, "status": StatusAbsent})
				case !ok:
					return fmt.Errorf("inspect %q: %w: a delivery of it now would claim it and run with fence 1", key, gate.ErrNotFound)
				case asJSON:
					return writeJSON(cmd, toJSON(r, time.Now()))
				}
				printRecord(cmd, r, time.Now())
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&raw, "raw", false, "KEY is the stored key (do not prefix ONCEGATE_NAMESPACE)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the record as one JSON object")
	return cmd
}

func newUnresolvedCmd() *cobra.Command {
	var limit int
	var asJSON, raw bool
	cmd := &cobra.Command{
		Use:   "unresolved",
		Short: "List records whose outcome is unknown, oldest first, with their age",
		Long: `unresolved lists the unknown records of ONCEGATE_NAMESPACE, oldest first, each key
printed without the namespace, as inspect and resolve take it. With --raw, or when
ONCEGATE_NAMESPACE is empty, it lists every namespace's, keys as stored (for --raw verbs).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withBackend(cmd, "list unresolved records", func(cfg *gateenv.Config, l gate.Admin) error {
				rs, err := listUnresolved(cmd.Context(), l, cfg, limit, raw)
				if err != nil {
					return err
				}
				now := time.Now()
				if asJSON {
					out := make([]recordJSON, len(rs))
					for i, r := range rs {
						out[i] = toJSON(r, now)
					}
					return writeJSON(cmd, out)
				}
				for _, r := range rs {
					// The record turned unknown after its last lease expiry.
					since := max(now.Sub(r.LeaseExpiry), 0).Truncate(time.Second)
					fmt.Fprintf(cmd.OutOrStdout(), "%s\tfence %d\towner %s\tlease ended %s ago\n", r.Key, r.Fence, r.Owner, since)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%d unresolved\n", len(rs))
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 100, "at most this many (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the records as a JSON array")
	cmd.Flags().BoolVar(&raw, "raw", false, "list every namespace's records, keys as stored")
	return cmd
}

// listUnresolved returns up to limit (≤ 0: all) unknown records, oldest first:
// with a namespace and not raw, only keys "<namespace>:…", that prefix cut off
// (the backend lists every namespace, so it is asked for all of them).
func listUnresolved(ctx context.Context, l gate.Admin, cfg *gateenv.Config, limit int, raw bool) ([]gate.Record, error) {
	ns := cfg.Gate.Namespace
	if raw || ns == "" {
		return l.ListUnresolved(ctx, limit)
	}
	all, err := l.ListUnresolved(ctx, 0)
	if err != nil {
		return nil, err
	}
	var rs []gate.Record
	for _, r := range all {
		if k, ok := strings.CutPrefix(r.Key, ns+":"); ok && (limit <= 0 || len(rs) < limit) {
			r.Key = k
			rs = append(rs, r)
		}
	}
	return rs, nil
}

func newResolveCmd() *cobra.Command {
	var done, retry, raw bool
	cmd := &cobra.Command{
		Use:   "resolve KEY (--done | --retry)",
		Short: "Resolve an unknown record: the effect happened (--done) or must run again (--retry)",
		Args:  oneKey,
		RunE: func(cmd *cobra.Command, args []string) error {
			if done == retry {
				return errors.New("resolve: give exactly one of --done (the effect happened) or --retry (run it again)")
			}
			return withBackend(cmd, "resolve records", func(cfg *gateenv.Config, rs gate.Admin) error {
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
accepted for the key. It never lowers a fence, so running it twice is harmless. N must be
below the largest fence (2^53-1): at that fence no further claim could be granted.`,
		Args: oneKey,
		RunE: func(cmd *cobra.Command, args []string) error {
			if atLeast < 1 || atLeast >= gate.MaxFence {
				return fmt.Errorf("advance-fence: --at-least %d: want a fence from 1 to %d (gate.MaxFence %d less one, so the next claim still gets a fence)",
					atLeast, gate.MaxFence-1, gate.MaxFence)
			}
			return withBackend(cmd, "advance fences", func(cfg *gateenv.Config, a gate.Backend) error {
				key := storedKey(cfg, args[0], raw)
				existed := true
				if _, found, err := a.Inspect(cmd.Context(), key); err == nil {
					existed = found
				}
				f, err := a.AdvanceFence(cmd.Context(), key, atLeast, cfg.Plan.TTL)
				if err != nil {
					return err
				}
				if !existed {
					fmt.Fprintf(cmd.OutOrStdout(), "%s had no record: created a free one (a lapsed claim with no owner) at fence %d, kept for %s (ONCEGATE_TTL); the next claim runs the key with fence %d\n",
						key, f, cfg.Plan.TTL, f+1)
					return nil
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
			return withBackend(cmd, "purge records", func(_ *gateenv.Config, p gate.Admin) error {
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

// oneKey accepts exactly one KEY argument: the idempotency key as the handler
// derived it, without the namespace (unless --raw).
func oneKey(cmd *cobra.Command, args []string) error {
	if len(args) == 1 {
		return nil
	}
	return fmt.Errorf("%s: want one KEY argument, the idempotency key as the handler derived it (without ONCEGATE_NAMESPACE's prefix), got %d; usage: oncegate %s",
		cmd.Name(), len(args), cmd.Use)
}
