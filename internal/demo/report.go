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
}

// Problem is one order (or worker) that failed the verdict.
type Problem struct {
	// Order is the order id ("" for a worker crash); Why says what went wrong.
	Order, Why string
}

// OK reports whether every distinct order reached the supplier exactly once:
// none held twice, none lost, every repeat explained by a kill, no worker
// crashed.
func (r Report) OK() bool {
	return r.HeldMoreThanOnce == 0 && r.Missing == 0 && r.UnexplainedRepeats == 0 &&
		r.SupplierOrders == r.DistinctOrders && r.Crashed == 0
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
	state := map[string]string{}
	for _, m := range msgs {
		s := "not acked"
		if _, acked := r.acked.Load(m.id); acked {
			s = "acked"
		} else if dead[m.id] {
			s = "dead-lettered"
		}
		state[m.o.body.Order] += fmt.Sprintf("; message %s %s after %d attempts", m.id, s, r.attempt(m.id))
	}
	for _, o := range orders {
		if o.body.Poison {
			continue
		}
		rep.DistinctOrders++
		if commits[ns+o.body.Order] == 0 {
			rep.Missing++
			rep.Problems = append(rep.Problems, Problem{Order: o.body.Order, Why: "the supplier does not hold it" + state[o.body.Order]})
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

// maxProblems bounds the problems the report prints.
const maxProblems = 20

func (r Report) print(w io.Writer) {
	fmt.Fprintf(w, "\nreport (%.1fs, namespace %s)\n", r.Duration.Seconds(), r.Namespace)
	deliveries, contention := "deliveries (push)", "contention nacks (503)"
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
		{"lost orders", int64(r.Missing), "must be 0"},
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
	if r.OK() {
		fmt.Fprintln(w, "OK: every distinct order reached the supplier exactly once")
		return
	}
	fmt.Fprintln(w, "FAILED: orders were held twice, lost, or repeated without a kill to explain it")
}
