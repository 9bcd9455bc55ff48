package e2e_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/supplier"
	"github.com/oncegate/oncegate/sizing"
)

// poisonPlan is a short unrenewed lease, so the plan's dead-letter policy is
// small: W = 3 s, ⌈3 s / 1 s⌉ + 1 + margin 2 = 6 attempts.
func poisonPlan() sizing.Plan {
	return sizing.Plan{Lease: 3 * time.Second, WorkDeadline: 2 * time.Second, AckDeadline: 10 * time.Second,
		MinBackoff: time.Second, MaxBackoff: time.Second, TTL: 30 * time.Minute, ShutdownGrace: 2 * time.Second}.WithDefaults()
}

// TestPoisonMessage, on the Pub/Sub emulator with the components'
// subscription (retry policy included: only the poison message is ever
// nacked): an order the supplier always rejects (422) fails its body on
// every delivery and is dead-lettered by the emulator after exactly the
// plan's max delivery attempts, where it is found on the dead-letter
// subscription with that delivery count; a healthy order published beside it
// goes through.
func TestPoisonMessage(t *testing.T) {
	plan := poisonPlan()
	if err := plan.Validate(); err != nil {
		t.Fatal(err)
	}
	t.Run(pubsubEmulator, func(t *testing.T) { poisonMessage(t, plan) })
}

func poisonMessage(t *testing.T, plan sizing.Plan) {
	eachBackend(t, 6, func(t *testing.T, b backend) {
		w := newWorld(t, b, worldOptions{Plan: plan, KeyAttribute: "order_id", PubSub: pubsubEmulator})
		poison := w.publish(supplier.Order{Order: "PO-POISON", Poison: true})
		healthy := w.publish(supplier.Order{Order: "PO-1"})
		w.waitSettled(settleTimeout)
		f := w.logFigures()
		dl := w.deadLettered(poison)
		if dl == nil || dl.GetAttributes()["order_id"] != "PO-POISON" {
			t.Fatalf("the poison order is not on the dead-letter subscription (found %v)", dl)
		}
		if got := dl.GetAttributes()[attrDeadLetterCount]; got != strconv.Itoa(plan.MaxDeliveryAttempts) {
			t.Errorf("the dead letter says %s=%q; want %d", attrDeadLetterCount, got, plan.MaxDeliveryAttempts)
		}
		ds := w.deliveriesOf(poison)
		if len(ds) != plan.MaxDeliveryAttempts || ds[len(ds)-1].Attempt != plan.MaxDeliveryAttempts {
			t.Errorf("poison delivered %d times (last attempt %d), want exactly the plan's %d", len(ds), ds[len(ds)-1].Attempt, plan.MaxDeliveryAttempts)
		}
		rejected := 0
		for _, c := range w.rec.Calls() {
			if c.Order == "PO-POISON" && c.Status == http.StatusUnprocessableEntity {
				rejected++
			}
		}
		if rejected != plan.MaxDeliveryAttempts {
			t.Errorf("supplier rejected the poison order %d times, want %d (one per delivery)", rejected, plan.MaxDeliveryAttempts)
		}
		if w.ackedAttempt(w.subs[0], healthy) == 0 || f.SupplierOrders != 1 || f.DeadLetters != 1 {
			t.Errorf("want the healthy order acked and the only order; %s", f)
		}
	})
}
