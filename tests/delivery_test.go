package e2e_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/supplier"
)

// settleTimeout bounds the small scenarios: a handful of 1 s backoffs, with
// room for a loaded machine.
const settleTimeout = 60 * time.Second

// lineWait is how long a worker's delivery line may trail its answer.
const lineWait = 5 * time.Second

// TestTransportRedelivery: worker 0 processes the message but its ack is lost
// on the way back, so Pub/Sub redelivers the message to worker 1, which skips
// it as a duplicate. One supplier call, one order.
func TestTransportRedelivery(t *testing.T) {
	eachBackend(t, 0, func(t *testing.T, b backend) {
		w := newWorld(t, b, worldOptions{}, func(w *world) {
			w.fe.route = func(p pushInfo) route {
				if p.Attempt <= 1 {
					return route{Worker: 0, LoseAck: true}
				}
				return route{Worker: 1}
			}
		})
		id := w.publish(supplier.Order{Order: "PO-1"})
		w.waitSettled(settleTimeout)
		f := w.logFigures()
		if w.deadLettered(id) != nil {
			t.Fatal("the message was dead-lettered")
		}
		if got := w.ackedAttempt(w.subs[0], id); got != 2 {
			t.Errorf("acked on delivery attempt %d, want 2 (the redelivery)", got)
		}
		if f.Bodies != 1 || f.SupplierOrders != 1 || f.SupplierDuplicates != 0 || f.LostAcks != 1 {
			t.Errorf("want 1 supplier call, 1 order and 1 lost ack; %s", f)
		}
		if !w.book.waitFor(is(0, "ran", id), lineWait) || !w.book.waitFor(is(1, "duplicate", id), lineWait) {
			t.Errorf("want worker 0 to run the message and worker 1 to skip it as a duplicate; lines %+v", w.book.Lines())
		}
	})
}

// TestConcurrentDelivery: Pub/Sub gives up on the push to worker 0 while the
// worker still runs it, and redelivers the message to worker 1 in the
// meantime (worker 0's supplier call is held until then). Worker 1 is nacked
// (503, in progress) and, on the next delivery, acks the message as a
// duplicate. One body, one order.
func TestConcurrentDelivery(t *testing.T) {
	eachBackend(t, 1, func(t *testing.T, b backend) {
		w := newWorld(t, b, worldOptions{}, func(w *world) {
			w.fe.route = func(p pushInfo) route {
				if p.Attempt <= 1 {
					return route{Worker: 0, Detach: true}
				}
				return route{Worker: 1}
			}
			w.rec.hook = func(c call) (int, bool) {
				if c.Worker == 0 && !w.book.waitFor(is(1, "in-progress", ""), settleTimeout) {
					w.t.Error("worker 1 never answered in-progress while worker 0 held the key")
				}
				return 0, false
			}
		})
		id := w.publish(supplier.Order{Order: "PO-1"})
		w.waitSettled(settleTimeout)
		f := w.logFigures()
		if got := w.ackedAttempt(w.subs[0], id); got < 3 {
			t.Errorf("acked on delivery attempt %d, want ≥ 3 (abandoned, nacked in progress, duplicate)", got)
		}
		calls := w.rec.Calls()
		if len(calls) != 1 || calls[0].Worker != 0 || f.SupplierOrders != 1 || f.SupplierDuplicates != 0 {
			t.Errorf("want one supplier call, from worker 0; calls %+v; %s", calls, f)
		}
		if !w.book.waitFor(is(0, "ran", id), lineWait) || !w.book.waitFor(is(1, "duplicate", id), lineWait) {
			t.Fatalf("want worker 0 to run and worker 1 to ack a duplicate; lines %+v", w.book.Lines())
		}
		var ran, firstBusy, dup line
		for _, l := range w.book.Lines() {
			switch {
			case l.Worker == 0 && l.Outcome == "ran":
				ran = l
			case l.Worker == 1 && l.Outcome == "in-progress" && firstBusy.Time.IsZero():
				firstBusy = l
			case l.Worker == 1 && l.Outcome == "duplicate":
				dup = l
			}
		}
		if firstBusy.Status != http.StatusServiceUnavailable || !firstBusy.Time.Before(ran.Time) || !ran.Time.Before(dup.Time) {
			t.Errorf("want worker 1 nacked (503) while worker 0 ran, then a duplicate: in-progress %+v, ran %+v, duplicate %+v", firstBusy, ran, dup)
		}
		if f.Ran != 1 || f.Duplicates != 1 {
			t.Errorf("want exactly one run and one duplicate; %s", f)
		}
	})
}

// TestTwoSubscriptions: two push subscriptions of one topic both deliver every
// message to workers sharing one namespace; the key is the message id, which
// both subscriptions see, so each message makes one order.
func TestTwoSubscriptions(t *testing.T) {
	const n = 10
	eachBackend(t, 2, func(t *testing.T, b backend) {
		w := newWorld(t, b, worldOptions{Subscriptions: 2, Workers: 3})
		var ids []string
		for i := range n {
			ids = append(ids, w.publish(supplier.Order{Order: fmt.Sprintf("PO-%d", i+1)}))
		}
		w.waitSettled(settleTimeout)
		f := w.logFigures()
		if f.SupplierOrders != n || f.Bodies != n || f.SupplierDuplicates != 0 || f.DeadLetters != 0 {
			t.Errorf("want %d orders from %d supplier calls, none dead-lettered; %s", n, n, f)
		}
		for _, id := range ids {
			for _, sub := range w.subs {
				if w.ackedAttempt(sub, id) == 0 {
					t.Errorf("message %s not acked on %s", id, sub)
				}
			}
			if !w.book.waitFor(is(-1, "duplicate", id), lineWait) {
				t.Errorf("message %s: no delivery was skipped as a duplicate", id)
			}
			if ran := w.book.count(is(-1, "ran", id)); ran != 1 {
				t.Errorf("message %s ran %d times, want 1", id, ran)
			}
		}
	})
}

// TestNackThenSuccess: the supplier fails the first two calls of the order
// (503), so the body fails and the message is nacked twice; the third
// delivery succeeds. One order, acked on attempt 3.
func TestNackThenSuccess(t *testing.T) {
	eachBackend(t, 3, func(t *testing.T, b backend) {
		w := newWorld(t, b, worldOptions{})
		id := w.publish(supplier.Order{Order: "PO-1", FailTimes: 2})
		w.waitSettled(settleTimeout)
		f := w.logFigures()
		if got := w.ackedAttempt(w.subs[0], id); got != 3 {
			t.Errorf("acked on delivery attempt %d, want 3", got)
		}
		var statuses []int
		for _, c := range w.rec.Calls() {
			statuses = append(statuses, c.Status)
		}
		if fmt.Sprint(statuses) != "[503 503 201]" {
			t.Errorf("supplier answers %v, want [503 503 201]", statuses)
		}
		if f.SupplierOrders != 1 || f.SupplierDuplicates != 0 || f.Deliveries != 3 || f.DeadLetters != 0 {
			t.Errorf("want one order from three deliveries; %s", f)
		}
		if !w.book.waitFor(is(-1, "ran", id), lineWait) || w.book.count(is(-1, "body-failed", id)) != 2 {
			t.Errorf("want two body failures then a run; lines %+v", w.book.Lines())
		}
	})
}
