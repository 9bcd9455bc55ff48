package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/oncegate/oncegate/sizing"
)

func newSizingCmd() *cobra.Command {
	var p sizing.Plan
	var recommend bool
	cmd := &cobra.Command{
		Use:   "sizing",
		Short: "Check a plan (lease, ttl, deadlines, retry and dead-letter policy) against invariants 1–3",
		Long: `sizing prints the plan with defaults applied, the delivery-attempt models and the
verdict. It exits non-zero when the plan is unsafe, with one sentence per violation
naming the fix. With --recommend it first completes the plan into one that fits
Pub/Sub's caps (raising the minimum backoff if needed).`,
		Example: `  oncegate sizing --lease 60s --heartbeat 20s --work-deadline 5m
  oncegate sizing --lease 15m --work-deadline 14m --min-backoff 10s --max-delivery-attempts 5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			plan, err := p.WithDefaults(), p.Validate()
			if recommend {
				plan, err = sizing.Recommend(p)
			}
			printPlan(cmd.OutOrStdout(), plan)
			if err != nil {
				// printPlan listed every violation with its fix.
				return fmt.Errorf("%w (violations above)", sizing.ErrUnsafePlan)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "verdict: safe")
			return nil
		},
	}
	f := cmd.Flags()
	f.DurationVar(&p.Lease, "lease", 0, "lease: how long a claim excludes other holders (required unless --recommend)")
	f.DurationVar(&p.TTL, "ttl", 0, "how long a done record is kept (default 1h)")
	f.DurationVar(&p.Heartbeat, "heartbeat", 0, "renew the lease at this interval while the work runs (0: none)")
	f.DurationVar(&p.WorkDeadline, "work-deadline", 0, "the longest the guarded work may run (required)")
	f.DurationVar(&p.ShutdownGrace, "shutdown-grace", 0, "how long a holder may outlive its work deadline at shutdown (default 10s)")
	f.DurationVar(&p.AckDeadline, "ack-deadline", 0, "subscription ack deadline, 10s–600s (default: the work deadline)")
	f.DurationVar(&p.MinBackoff, "min-backoff", 0, "retry policy minimum backoff (default 10s)")
	f.DurationVar(&p.MaxBackoff, "max-backoff", 0, "retry policy maximum backoff (default 600s)")
	f.IntVar(&p.MaxDeliveryAttempts, "max-delivery-attempts", 0, "dead-letter policy max delivery attempts, 5–100 (default: what the plan requires)")
	f.DurationVar(&p.RequestTimeout, "request-timeout", 0, "Cloud Run request timeout, at most 3600s (default 300s)")
	f.BoolVar(&recommend, "recommend", false, "complete the plan into a safe one where possible")
	return cmd
}

func printPlan(w io.Writer, p sizing.Plan) {
	a := p.Attempts()
	fmt.Fprintf(w, "plan\n")
	for _, row := range []struct {
		name string
		v    any
	}{
		{"lease", p.Lease}, {"heartbeat", p.Heartbeat}, {"ttl", p.TTL}, {"work deadline", p.WorkDeadline},
		{"shutdown grace", p.ShutdownGrace}, {"ack deadline", p.AckDeadline}, {"min backoff", p.MinBackoff},
		{"max backoff", p.MaxBackoff}, {"max delivery attempts", p.MaxDeliveryAttempts}, {"request timeout", p.RequestTimeout},
	} {
		fmt.Fprintf(w, "  %-22s %v\n", row.name, row.v)
	}
	fmt.Fprintf(w, "attempts model (W = longest wait behind a holder = %s)\n", a.Wait)
	fmt.Fprintf(w, "  conservative (every delay = min backoff)  %d, +%d margin = %d required\n", a.Conservative, sizing.Margin, a.Required)
	fmt.Fprintf(w, "  doubling (min backoff doubling to max)    %d\n", a.Doubling)
	var pe *sizing.PlanError
	if err := p.Validate(); errors.As(err, &pe) {
		fmt.Fprintln(w, "verdict: unsafe")
		for _, v := range pe.Violations {
			fmt.Fprintf(w, "  - %s\n", v.Message)
		}
	}
}
