package e2e_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/supplier"
)

// mutexHold keeps every supplier call of the mutex scenario inside the
// supplier this long, so that two calls of one entity overlap if the gateway
// lets them.
const mutexHold = 150 * time.Millisecond

// publishUpdates publishes updates status updates for each of entities
// entities, all at once, and returns the orders.
func publishUpdates(w *world, entities, updates int) []string {
	var orders []string
	for u := range updates {
		for e := range entities {
			o := supplier.Order{Order: fmt.Sprintf("E%d-status-%d", e+1, u+1), Entity: fmt.Sprintf("E%d", e+1)}
			w.publish(o)
			orders = append(orders, o.Order)
		}
	}
	return orders
}

// TestMutex: under ONCEGATE_MODE=mutex keyed by the entity attribute, five
// status updates for each of two entities (all published at once, pushed 8 at
// a time to 3 workers) are each applied exactly once, and no two supplier
// calls of one entity are ever inside the supplier together. The updates of
// one entity share the gate key, so the supplier counts them under one
// Idempotency-Key (its "duplicates" figure is expected here); each keeps its
// own order id, which is what is checked. A control run in lock mode keyed by
// order id shows that the probe does see overlaps when nothing serializes.
func TestMutex(t *testing.T) {
	const entities, updates = 2, 5
	eachBackend(t, 4, func(t *testing.T, b backend) {
		w := newWorld(t, b, worldOptions{Mode: "mutex", KeyAttribute: "entity", Workers: 3},
			func(w *world) { w.rec.hold = mutexHold })
		orders := publishUpdates(w, entities, updates)
		w.waitSettled(settleTimeout)
		f := w.logFigures()
		calls := w.rec.Calls()
		applied := map[string]int{}
		for _, c := range calls {
			if c.Status/100 == 2 {
				applied[c.Order]++
			}
		}
		for _, o := range orders {
			if applied[o] != 1 {
				t.Errorf("update %s applied %d times, want 1", o, applied[o])
			}
		}
		if n := overlaps(calls); n != 0 || w.rec.sup.Report().Overlaps != 0 {
			t.Errorf("%d overlapping supplier calls of one entity (supplier counted %d), want 0", n, w.rec.sup.Report().Overlaps)
		}
		if f.StaleFences != 0 || f.DeadLetters != 0 || f.Bodies != len(orders) {
			t.Errorf("want %d calls, no stale fence, nothing dead-lettered; %s", len(orders), f)
		}
		if f.InProgress == 0 {
			t.Errorf("no delivery found its entity busy: the run did not exercise the mutex; %s", f)
		}
		byEntity := map[string][]call{}
		for _, c := range calls {
			byEntity[c.Entity] = append(byEntity[c.Entity], c)
		}
		for e, cs := range byEntity {
			slices.SortFunc(cs, func(a, b call) int { return a.Start.Compare(b.Start) })
			for i := 1; i < len(cs); i++ {
				if cs[i].Fence <= cs[i-1].Fence {
					t.Errorf("entity %s: call %d carries fence %d after fence %d; each release must raise it", e, i, cs[i].Fence, cs[i-1].Fence)
				}
			}
		}
	})
	t.Run("control", func(t *testing.T) {
		b := backendsFor(t, 4)[0]
		w := newWorld(t, b, worldOptions{KeyAttribute: "order_id", Workers: 3}, func(w *world) { w.rec.hold = mutexHold })
		publishUpdates(w, entities, updates)
		w.waitSettled(settleTimeout)
		w.logFigures()
		if overlaps(w.rec.Calls()) == 0 {
			t.Error("lock mode keyed by order id: the probe saw no overlapping calls of one entity, so it proves nothing about the mutex")
		}
	})
}
