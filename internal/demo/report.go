package demo

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/oncegate/oncegate/internal/crashwindow"
)

// Report is what a demo run came to.
type Report struct {
	Duration time.Duration
	// Namespace is the run's key namespace.
	Namespace string
	// Published counts messages (a republished order counts twice);
	// DistinctOrders the orders that should reach the supplier (all but poison).
	Published, DistinctOrders int
	// Pull says the workers were pull subscribers (Options.Pull).
	Pull bool
	// Deliveries counts push requests: Pub/Sub's (through the balancer) plus
	// the injected ones; with Pull, the deliveries the workers logged (the
	// injected trouble is published, so it is in Published).
	Deliveries int64
	// BodiesRun counts supplier calls (every body run calls it once).
	BodiesRun int
	// Outcomes from the workers' log lines.
	Ran, Duplicates, InProgress, BodyFailed int64
	DeadLettered, Kills                     int
	// Crashed counts workers that exited on their own (a bug, not a kill).
	Crashed int
	// SupplierOrders counts the distinct orders the supplier holds;
	// HeldMoreThanOnce the commits beyond one per order (two overlapping calls
	// of one key both committed; must be 0); Missing the expected orders it
	// does not hold.
	SupplierOrders, HeldMoreThanOnce, Missing int
	// Repeats counts the successful supplier calls beyond one per order (the
	// supplier absorbed them, or held the order twice); ExplainedRepeats those
	// a kill inside the call→done window explains; UnrecordedRepeats those
	// that follow an unrecorded effect (crashwindow.Accounting.AfterUnrecorded:
	// a committed call whose worker then answered body-failed, its answer lost
	// to the work deadline on a stalled machine, or not-recorded), the ack
	// table's gap that Idempotency-Key closes; UnexplainedRepeats the rest
	// (must be 0); KillsInWindow the kills that cut a call.
	Repeats, ExplainedRepeats, UnrecordedRepeats, UnexplainedRepeats, KillsInWindow int
	// Problems names each order that failed the verdict, and why.
	Problems []Problem
	// StoreDir is the kept SQLite file's directory ("" when none was kept).
	StoreDir string
	// Incomplete says why the run ended before every message was acked or
	// dead-lettered ("timed out after 5s waiting for 3 messages of 3
	// orders"), or is "". An incomplete run is not OK, but its lost orders
	// may only have been late: it fails the guarantees only if Violated.
	Incomplete string
}

// Problem is one order (or worker) that failed the verdict.
type Problem struct {
	// Order is the order id ("" for a worker crash); Why says what went wrong.
	Order, Why string
}

// OK reports whether the run completed and every distinct order reached the
// supplier exactly once: none held twice, none lost, every repeat explained
// by a kill, no worker crashed.
func (r Report) OK() bool {
	return r.Incomplete == "" && !r.Violated() && r.Missing == 0 && r.SupplierOrders == r.DistinctOrders
}

// Violated reports whether the run broke a guarantee whatever its end: an
// order held twice, an unexplained repeat, a worker crash, or more orders at
// the supplier than were meant to reach it. A lost order is a violation only
// in a complete run (OK), as an incomplete one may have stopped before it
// arrived.
func (r Report) Violated() bool {
	return r.HeldMoreThanOnce != 0 || r.UnexplainedRepeats != 0 || r.Crashed != 0 || r.SupplierOrders > r.DistinctOrders
}

// report judges the run so far: dead holds the dead-lettered message ids.
func (r *run) report(start time.Time, msgs []message, dead map[string]bool, orders []order) Report {
	ns := r.o.Namespace + ":"
	rep := Report{Duration: time.Since(start), Namespace: r.o.Namespace, Published: len(msgs), Pull: r.o.Pull,
		Deliveries: r.pushes.Load() + r.injected.Load(), DeadLettered: len(dead),
		Ran: r.outcome("ran"), Duplicates: r.outcome("duplicate"), InProgress: r.outcome("in-progress"),
		BodyFailed: r.outcome("body-failed")}
	if r.o.Pull {
		rep.Deliveries = r.pushes.Load()
	}
	lines, kills := r.history()
	rep.Kills = len(kills)
	calls := r.supplier.Calls()
	rep.BodiesRun = len(calls)
	commits := map[string]int{}
	var ok []crashwindow.Call
	for _, c := range calls {
		if c.Committed {
			commits[c.Key]++
		}
		if c.Committed || c.Absorbed {
			ok = append(ok, crashwindow.Call{Worker: c.Worker, Key: c.Key, Start: c.Start})
		}
	}
	acc := crashwindow.Account(ok, lines, kills)
	rep.Repeats, rep.ExplainedRepeats, rep.KillsInWindow = acc.Extra, acc.Explained, acc.KillsInWindow
	rep.UnrecordedRepeats, rep.UnexplainedRepeats = acc.AfterUnrecorded, acc.Unexplained-acc.AfterUnrecorded
	for _, k := range acc.UnexplainedKeys {
		if slices.Contains(acc.UnrecordedKeys, k) {
			continue
		}
		rep.Problems = append(rep.Problems, Problem{Order: strings.TrimPrefix(k, ns),
			Why: "called the supplier again after its order was committed, with no kill inside the earlier call's call→done window"})
	}
	for k, n := range commits {
		rep.SupplierOrders++
		if n > 1 {
			rep.HeldMoreThanOnce += n - 1
			rep.Problems = append(rep.Problems, Problem{Order: strings.TrimPrefix(k, ns),
				Why: fmt.Sprintf("held %d times by the supplier: overlapping calls both committed", n)})
		}
	}
	state := r.states(msgs, dead)
	for _, o := range orders {
		if o.body.Poison {
			continue
		}
		rep.DistinctOrders++
		if commits[ns+o.body.Order] == 0 {
			rep.Missing++
			rep.Problems = append(rep.Problems, Problem{Order: o.body.Order, Why: notHeld + state[o.body.Order]})
		}
	}
	for i, w := range r.workers {
		if exited, tail := w.Exited(); exited {
			rep.Crashed++
			rep.Problems = append(rep.Problems, Problem{Why: fmt.Sprintf("worker %d exited on its own: %s", i+1, strings.Join(tail, " | "))})
		}
	}
	sort.SliceStable(rep.Problems, func(i, j int) bool { return rep.Problems[i].Order < rep.Problems[j].Order })
	return rep
}

// notHeld is why a lost order is a problem; timedOut rewrites it.
const notHeld = "the supplier does not hold it"

// states says, per order, what became of each of its messages:
// "; message ID acked after N attempts" and so on.
func (r *run) states(msgs []message, dead map[string]bool) map[string]string {
	state := map[string]string{}
	for _, m := range msgs {
		s := "not acked"
		if _, acked := r.acked.Load(m.id); acked {
			s = "acked"
		} else if dead[m.id] {
			s = "dead-lettered"
		}
		state[m.o.body.Order] += fmt.Sprintf("; message %s %s after %s", m.id, s, plural(int(r.attempt(m.id)), "attempt"))
	}
	return state
}

// timedOut marks rep incomplete: the run's deadline (Options.Timeout) passed
// while waiting still waited to be acked or dead-lettered. Every order with a
// waiting message gets a problem, so the orders the verdict counts are the
// orders listed: one the supplier does not hold is listed already (lost so
// far), the poison order not yet dead-lettered and an order held but not yet
// acked are added.
func (r *run) timedOut(rep *Report, waiting, msgs []message, dead map[string]bool) {
	listed := map[string]bool{}
	for i, p := range rep.Problems {
		listed[p.Order] = true
		if why, ok := strings.CutPrefix(p.Why, notHeld); ok {
			rep.Problems[i].Why = "is not at the supplier yet" + why
		}
	}
	state := r.states(msgs, dead)
	orders := map[string]bool{}
	for _, m := range waiting {
		o := m.o.body
		if orders[o.Order] {
			continue
		}
		orders[o.Order] = true
		if listed[o.Order] {
			continue
		}
		why := "is held by the supplier, but not yet acked when the run timed out"
		if o.Poison {
			why = fmt.Sprintf("is the poison order, not yet dead-lettered (that takes %d attempts) when the run timed out", r.plan.MaxDeliveryAttempts)
		}
		rep.Problems = append(rep.Problems, Problem{Order: o.Order, Why: why + state[o.Order]})
	}
	sort.SliceStable(rep.Problems, func(i, j int) bool { return rep.Problems[i].Order < rep.Problems[j].Order })
	rep.Incomplete = fmt.Sprintf("timed out after %s waiting for %s of %s", r.o.Timeout, plural(len(waiting), "message"), plural(len(orders), "order"))
}

// plural is "1 order", "2 orders".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// maxProblems bounds the problems the report prints.
const maxProblems = 20

func (r Report) print(w io.Writer) {
	fmt.Fprintf(w, "\nreport (%.1fs, namespace %s)\n", r.Duration.Seconds(), r.Namespace)
	deliveries, contention := "deliveries (push)", "contention nacks (503)"
	lostLabel, lostNote := "lost orders", "must be 0"
	if r.Incomplete != "" {
		lostLabel, lostNote = "not yet at the supplier", "the run stopped before every message settled"
	}
	if r.Pull {
		deliveries, contention = "deliveries (pull)", "contention nacks"
	}
	for _, row := range []struct {
		label string
		n     int64
		note  string
	}{
		{"messages published", int64(r.Published), ""},
		{deliveries, r.Deliveries, ""},
		{"bodies run (supplier calls)", int64(r.BodiesRun), ""},
		{"duplicates skipped", r.Duplicates, ""},
		{contention, r.InProgress, ""},
		{"body failures (nacked)", r.BodyFailed, ""},
		{"dead-lettered", int64(r.DeadLettered), ""},
		{"workers killed", int64(r.Kills), ""},
		{"workers crashed", int64(r.Crashed), "must be 0"},
		{"distinct orders", int64(r.DistinctOrders), ""},
		{"orders the supplier holds", int64(r.SupplierOrders), ""},
		{"held more than once", int64(r.HeldMoreThanOnce), "must be 0"},
		{lostLabel, int64(r.Missing), lostNote},
		{"repeated calls", int64(r.Repeats), "calls after the order was committed; the supplier absorbed them"},
		{"  explained by a kill", int64(r.ExplainedRepeats), fmt.Sprintf("the caller was killed inside the call→done window; kills that cut a call: %d", r.KillsInWindow)},
		{"  after an unrecorded effect", int64(r.UnrecordedRepeats), "the committed call's answer was lost (body failed) or its record not written"},
		{"  unexplained", int64(r.UnexplainedRepeats), "must be 0"},
	} {
		line := fmt.Sprintf("  %-28s %6d", row.label, row.n)
		if row.note != "" {
			line += "   (" + row.note + ")"
		}
		fmt.Fprintln(w, line)
	}
	for i, p := range r.Problems {
		if i == maxProblems {
			fmt.Fprintf(w, "  … and %d more\n", len(r.Problems)-maxProblems)
			break
		}
		if p.Order == "" {
			fmt.Fprintf(w, "  problem: %s\n", p.Why)
			continue
		}
		fmt.Fprintf(w, "  problem: %s %s\n", p.Order, p.Why)
	}
	switch {
	case r.OK():
		fmt.Fprintln(w, "OK: every distinct order reached the supplier exactly once")
	case r.Incomplete != "" && !r.Violated():
		fmt.Fprintf(w, "INCOMPLETE: %s; raise --timeout (no order was held twice or repeated so far; the rest has no verdict)\n", r.Incomplete)
	case r.Incomplete != "":
		fmt.Fprintf(w, "FAILED: orders were held twice or repeated without a kill to explain it, or a worker crashed (and the run %s)\n", r.Incomplete)
	default:
		fmt.Fprintln(w, "FAILED: orders were held twice, lost, or repeated without a kill to explain it")
	}
}
