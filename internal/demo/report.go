package demo

import (
	"fmt"
	"io"
	"time"
)

// Report is what a demo run came to.
type Report struct {
	Duration time.Duration
	// Published counts messages (a republished order counts twice);
	// DistinctOrders the orders that should reach the supplier (all but poison).
	Published, DistinctOrders int
	// Deliveries counts push requests: the bridge's plus the injected ones.
	Deliveries int64
	// BodiesRun counts supplier calls (every body run calls it once).
	BodiesRun int
	// Outcomes from the workers' log lines.
	Ran, Duplicates, InProgress, BodyFailed int64
	DeadLettered, Kills                     int
	// Crashed counts workers that exited on their own (a bug, not a kill).
	Crashed int
	// SupplierOrders counts distinct keys accepted; SupplierDuplicates accepted
	// calls beyond one per key; Missing the expected orders never accepted.
	SupplierOrders, SupplierDuplicates, Missing int
}

// OK reports whether every distinct order reached the supplier exactly once.
func (r Report) OK() bool {
	return r.SupplierDuplicates == 0 && r.Missing == 0 && r.SupplierOrders == r.DistinctOrders && r.Crashed == 0
}

func (r *run) report(start time.Time, ids []string, dead int, expect map[string]bool) Report {
	s := r.supplier.Report()
	missing := 0
	for k := range expect {
		if r.supplier.Accepted(k) == 0 {
			missing++
		}
	}
	crashed := 0
	for _, w := range r.workers {
		if exited, _ := w.Exited(); exited {
			crashed++
		}
	}
	return Report{
		Crashed: crashed, Duration: time.Since(start), Published: len(ids), DistinctOrders: len(expect),
		Deliveries: r.bridge.Stats().Deliveries + r.injected.Load(), BodiesRun: s.Calls,
		Ran: r.outcome("ran"), Duplicates: r.outcome("duplicate"), InProgress: r.outcome("in-progress"),
		BodyFailed: r.outcome("body-failed"), DeadLettered: dead, Kills: int(r.kills.Load()),
		SupplierOrders: s.Orders, SupplierDuplicates: s.Duplicates, Missing: missing,
	}
}

func (r Report) print(w io.Writer) {
	verdict := "OK: every distinct order reached the supplier exactly once"
	if !r.OK() {
		verdict = "FAILED: orders were duplicated or lost"
	}
	fmt.Fprintf(w, `
report (%.1fs)
  messages published        %6d
  deliveries (push)         %6d
  bodies run                %6d
  duplicates skipped        %6d
  contention nacks (503)    %6d
  body failures (nacked)    %6d
  dead-lettered             %6d
  workers killed            %6d
  workers crashed           %6d
  distinct orders           %6d
  orders at the supplier    %6d
  duplicate orders          %6d
  lost orders               %6d
%s
`, r.Duration.Seconds(), r.Published, r.Deliveries, r.BodiesRun, r.Duplicates, r.InProgress, r.BodyFailed,
		r.DeadLettered, r.Kills, r.Crashed, r.DistinctOrders, r.SupplierOrders, r.SupplierDuplicates, r.Missing, verdict)
}
