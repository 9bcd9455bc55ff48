package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/oncegate/oncegate/sizing"
)

// sizingFlags maps each sizing.Plan field to its flag.
var sizingFlags = map[string]string{
	"Lease": "lease", "TTL": "ttl", "Heartbeat": "heartbeat", "WorkDeadline": "work-deadline",
	"ShutdownGrace": "shutdown-grace", "AckDeadline": "ack-deadline", "MinBackoff": "min-backoff",
	"MaxBackoff": "max-backoff", "MaxDeliveryAttempts": "max-delivery-attempts",
	"RequestTimeout": "request-timeout", "StoreTimeout": "store-timeout",
	"DeadLetterReplayWindow": "dead-letter-replay-window", "StoreOutage": "store-outage",
}

func newSizingCmd() *cobra.Command {
	var p sizing.Plan
	var recommend bool
	cmd := &cobra.Command{
		Use:   "sizing",
		Short: "Check a plan (lease, ttl, deadlines, store timeout, retry and dead-letter policy) against invariants 1–5",
		Long: `sizing prints the plan with defaults applied, the delivery-attempt models, the
redelivery horizon the TTL must cover (invariant 4), the time budget the ack
deadline must fit (invariant 5) and the verdict. It exits non-zero when the plan
is unsafe, with one sentence per violation naming the invariant and the fix.

A flag left out (or 0; --min-backoff 0s is refused) takes the default named in
its help. With --recommend it first completes the plan into one that fits
Pub/Sub's caps and prints every value it set or replaced, and why; a value you
gave is replaced only when it breaks an invariant a larger value fixes, and the
output says so.`,
		Example: `  # A minute of work under a 60s lease renewed every 20s (safe):
  oncegate sizing --lease 60s --heartbeat 20s --work-deadline 60s

  # Complete a plan from the work deadline alone (safe):
  oncegate sizing --recommend --work-deadline 5m

  # UNSAFE, on purpose: 5 attempts cannot cover a crashed 15m lease, and a
  # 1ms TTL expires before Pub/Sub stops redelivering; the output names the fixes:
  oncegate sizing --lease 15m --work-deadline 9m --max-delivery-attempts 5 --ttl 1ms`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f := cmd.Flags().Lookup("min-backoff"); f.Changed && p.MinBackoff == 0 {
				return errors.New("--min-backoff 0s: a zero minimum backoff means the default 10s (Pub/Sub's) throughout the plan and its environment, never no backoff; leave the flag out for the default, or give a positive value")
			}
			plan, err := p.WithDefaults(), p.Validate()
			var changes []sizing.Change
			if recommend {
				plan, changes, err = sizing.RecommendChanges(p)
			}
			w := cmd.OutOrStdout()
			printPlan(w, p, plan)
			if recommend {
				printChanges(w, changes)
			}
			var pe *sizing.PlanError
			if errors.As(err, &pe) {
				printViolations(w, pe)
				return fmt.Errorf("%w: %s (fixes above)", sizing.ErrUnsafePlan, broken(pe))
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(w, "verdict: safe")
			return nil
		},
	}
	f := cmd.Flags()
	f.DurationVar(&p.Lease, "lease", 0, "how long a claim excludes other holders (required unless --recommend)")
	f.DurationVar(&p.TTL, "ttl", 0, "how long a done record is kept (default: the redelivery horizon plus the replay window, rounded up to whole hours, at least 1h)")
	f.DurationVar(&p.Heartbeat, "heartbeat", 0, "renew the lease at this interval while the work runs (0: none)")
	f.DurationVar(&p.WorkDeadline, "work-deadline", 0, "the longest the guarded work may run (required)")
	f.DurationVar(&p.ShutdownGrace, "shutdown-grace", 0, "how long a holder may outlive its work deadline at shutdown (default 10s, Cloud Run's)")
	f.DurationVar(&p.AckDeadline, "ack-deadline", 0, "subscription ack deadline, 10s–600s (default: the time budget in whole seconds)")
	f.DurationVar(&p.MinBackoff, "min-backoff", 0, "retry policy minimum backoff, up to 600s (default 10s, Pub/Sub's; 0s is refused)")
	f.DurationVar(&p.MaxBackoff, "max-backoff", 0, "retry policy maximum backoff, up to 600s (default 600s, Pub/Sub's)")
	f.IntVar(&p.MaxDeliveryAttempts, "max-delivery-attempts", 0, "dead-letter policy max delivery attempts, 5–100 (default: what the plan requires)")
	f.DurationVar(&p.RequestTimeout, "request-timeout", 0, "Cloud Run request timeout, at most 3600s (default 300s, or the time budget when longer)")
	f.DurationVar(&p.StoreTimeout, "store-timeout", 0, "bound of each store phase: claim, complete (retried within it), unknown mark (default 2s, at least 100ms)")
	f.DurationVar(&p.DeadLetterReplayWindow, "dead-letter-replay-window", 0, "how long after dead-lettering a replay under the same key may still be delivered (0: never replayed)")
	f.DurationVar(&p.StoreOutage, "store-outage", 0, "the longest store outage the delivery attempts must ride out: every delivery during one is nacked (0: none budgeted)")
	f.BoolVar(&recommend, "recommend", false, "complete the plan into a safe one where possible, saying what changed and why")
	return cmd
}

var fd = sizing.FormatDuration

// printPlan writes the resolved plan, marking the values that came from a
// default, then the attempts model, the horizon and the time budget.
func printPlan(w io.Writer, in, p sizing.Plan) {
	a := p.Attempts()
	fmt.Fprintf(w, "plan\n")
	for _, row := range []struct {
		name    string
		in, out string
	}{
		{"lease", fd(in.Lease), fd(p.Lease)}, {"heartbeat", fd(in.Heartbeat), fd(p.Heartbeat)},
		{"ttl", fd(in.TTL), fd(p.TTL)}, {"work deadline", fd(in.WorkDeadline), fd(p.WorkDeadline)},
		{"shutdown grace", fd(in.ShutdownGrace), fd(p.ShutdownGrace)}, {"ack deadline", fd(in.AckDeadline), fd(p.AckDeadline)},
		{"min backoff", fd(in.MinBackoff), fd(p.MinBackoff)}, {"max backoff", fd(in.MaxBackoff), fd(p.MaxBackoff)},
		{"max delivery attempts", strconv.Itoa(in.MaxDeliveryAttempts), strconv.Itoa(p.MaxDeliveryAttempts)},
		{"request timeout", fd(in.RequestTimeout), fd(p.RequestTimeout)}, {"store timeout", fd(in.StoreTimeout), fd(p.StoreTimeout)},
		{"dead-letter replay", fd(in.DeadLetterReplayWindow), fd(p.DeadLetterReplayWindow)},
		{"store outage", fd(in.StoreOutage), fd(p.StoreOutage)},
	} {
		note := ""
		switch {
		case (row.in == "0s" || row.in == "0") && row.in != row.out:
			note = "  (default)"
		case row.out == "0s" && (row.name == "heartbeat" || row.name == "dead-letter replay" || row.name == "store outage"):
			note = "  (none)"
		}
		fmt.Fprintf(w, "  %-22s %s%s\n", row.name, row.out, note)
	}
	n := p.MaxDeliveryAttempts
	fmt.Fprintf(w, "attempts model (W = longest wait behind a holder = %s", fd(a.Wait))
	if a.Outage > 0 {
		fmt.Fprintf(w, ", plus a %s store outage", fd(a.Outage))
	}
	fmt.Fprintf(w, ")\n")
	fmt.Fprintf(w, "  conservative (every delay = min backoff)  %d, +%d margin = %d required\n", a.Conservative, sizing.Margin, a.Required)
	fmt.Fprintf(w, "  doubling (min backoff doubling to max)    %d\n", a.Doubling)
	fmt.Fprintf(w, "store outage ridden out by %d attempts (every delivery during one is nacked)\n", n)
	fmt.Fprintf(w, "  conservative %s, doubling %s; an outage longer than the conservative figure (the one relied on) may dead-letter healthy messages (--store-outage budgets one)\n", fd(a.RideOut), fd(a.RideOutDoubling))
	fmt.Fprintf(w, "redelivery horizon (invariant 4: ttl ≥ horizon + replay window)\n")
	fmt.Fprintf(w, "  %d attempts × %s ack deadline + %d × %s max backoff = %s", n, fd(p.AckDeadline), max(n-1, 0), fd(p.MaxBackoff), fd(p.Horizon()))
	if p.DeadLetterReplayWindow > 0 {
		fmt.Fprintf(w, ", + %s replay window", fd(p.DeadLetterReplayWindow))
	}
	fmt.Fprintf(w, "; ttl %s\n", fd(p.TTL))
	st := fd(p.StoreTimeout)
	fmt.Fprintf(w, "time budget (invariant 5: budget ≤ ack deadline and request timeout)\n")
	fmt.Fprintf(w, "  claim %s + work %s + complete %s + unknown mark %s = %s; ack deadline %s, request timeout %s\n",
		st, fd(p.WorkDeadline), st, st, fd(p.Budget()), fd(p.AckDeadline), fd(p.RequestTimeout))
}

// printChanges writes what --recommend set or replaced, and why.
func printChanges(w io.Writer, cs []sizing.Change) {
	if len(cs) == 0 {
		fmt.Fprintln(w, "recommend: nothing to change")
		return
	}
	fmt.Fprintln(w, "recommend: changed")
	for _, c := range cs {
		flag := "--" + sizingFlags[c.Field]
		if c.Replaced {
			fmt.Fprintf(w, "  %s %s → %s  REPLACED your value: %s\n", flag, c.From, c.To, c.Why)
		} else {
			fmt.Fprintf(w, "  %s %s  (not given): %s\n", flag, c.To, c.Why)
		}
	}
}

func printViolations(w io.Writer, pe *sizing.PlanError) {
	fmt.Fprintln(w, "verdict: unsafe")
	for _, v := range pe.Violations {
		fmt.Fprintf(w, "  - --%s: %s\n", sizingFlags[v.Field], v.Message)
	}
}

// broken names the invariants and ranges a plan breaks, e.g. "breaks
// invariant 4" or "breaks invariants 3 and 4, and a range".
func broken(pe *sizing.PlanError) string {
	var invs []string
	ranges := false
	for _, v := range pe.Violations {
		if v.Invariant == 0 {
			ranges = true
		} else if s := strconv.Itoa(v.Invariant); !slices.Contains(invs, s) {
			invs = append(invs, s)
		}
	}
	slices.Sort(invs)
	var parts []string
	switch len(invs) {
	case 0:
	case 1:
		parts = append(parts, "invariant "+invs[0])
	default:
		parts = append(parts, "invariants "+strings.Join(invs[:len(invs)-1], ", ")+" and "+invs[len(invs)-1])
	}
	if ranges {
		parts = append(parts, "a documented range")
	}
	return "breaks " + strings.Join(parts, " and ")
}
