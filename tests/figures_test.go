package e2e_test

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

var discardLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// figures are what a scenario came to, from the bridges, the workers' lines,
// the recorder and the supplier.
type figures struct {
	Messages, Deliveries, Bodies, Ran, Duplicates, InProgress, BodyFailed int
	SupplierOrders, SupplierDuplicates, StaleFences, Kills, DeadLetters   int
	LostAcks, Detached                                                    int
}

func (w *world) figures() figures {
	w.mu.Lock()
	f := figures{Messages: len(w.published), DeadLetters: len(w.deadLetters)}
	for _, ds := range w.deliveries {
		f.Deliveries += len(ds)
	}
	w.mu.Unlock()
	oc := w.book.outcomes()
	f.Ran, f.Duplicates, f.InProgress, f.BodyFailed = oc["ran"], oc["duplicate"], oc["in-progress"], oc["body-failed"]
	f.Bodies = len(w.rec.Calls())
	s := w.rec.sup.Report()
	f.SupplierOrders, f.SupplierDuplicates, f.StaleFences = s.Orders, s.Duplicates, s.StaleFences
	f.Kills = len(w.book.Kills())
	f.LostAcks, f.Detached = int(w.fe.lostAcks.Load()), int(w.fe.detached.Load())
	return f
}

func (f figures) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "messages %d, deliveries %d, bodies %d (ran %d, body failures %d), duplicates skipped %d, in-progress nacks %d, supplier orders %d",
		f.Messages, f.Deliveries, f.Bodies, f.Ran, f.BodyFailed, f.Duplicates, f.InProgress, f.SupplierOrders)
	fmt.Fprintf(&b, " (duplicates %d, stale fences %d), kills %d, dead letters %d", f.SupplierDuplicates, f.StaleFences, f.Kills, f.DeadLetters)
	if f.LostAcks+f.Detached > 0 {
		fmt.Fprintf(&b, ", acks lost %d, pushes abandoned %d", f.LostAcks, f.Detached)
	}
	return b.String()
}

// logFigures logs the scenario's figures with the backend's name.
func (w *world) logFigures() figures {
	f := w.figures()
	w.t.Logf("figures %s: %s", w.backend, f)
	return f
}
