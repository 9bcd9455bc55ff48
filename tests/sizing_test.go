package e2e_test

import (
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/supplier"
	"github.com/oncegate/oncegate/sizing"
)

// sizingProofPlan is an unrenewed 20 s lease with a 1 s backoff: a holder
// that dies right after claiming keeps the key for 20 s, so W = 20 s and the
// plan needs ⌈20 s / 1 s⌉ + 1 + margin 2 = 23 delivery attempts. The maximum
// backoff equals the minimum, so the conservative model's delays are the
// retry policy's. The emulator waits longer than the policy (about 1 s before
// the first redelivery, about 3 s before each later one: see tests/doc.go),
// so Pub/Sub's minimum of 5 attempts spans about 10 s there, well inside the
// 20 s lease: the control dead-letters however the machine's load stretches
// those gaps, short of doubling them.
func sizingProofPlan() sizing.Plan {
	return sizing.Plan{Lease: 20 * time.Second, WorkDeadline: 4 * time.Second, AckDeadline: 10 * time.Second,
		MinBackoff: time.Second, MaxBackoff: time.Second, TTL: 30 * time.Minute, ShutdownGrace: 2 * time.Second}.WithDefaults()
}

// TestSizingProof, on the Pub/Sub emulator with the push subscription the
// components deploy (ack deadline, retry policy and dead-letter policy from
// the plan): a worker is killed with SIGKILL right after it claimed the
// message's key (inside its body, before its supplier call commits). With the
// plan's max delivery attempts — what the components would deploy — the
// message waits out the lease through nacks, is not dead-lettered, and is
// processed exactly once after the lease lapses, under a raised fence. The
// negative control runs the same with a subscription that drifted to
// Pub/Sub's minimum of 5 attempts (a plan the sizing check refuses): the
// message is dead-lettered while the dead holder's lease is still live and
// the order never reaches the supplier, so the sizing is what makes the
// difference. The emulator does the redelivering and the dead-lettering: no
// project code counts attempts or decides when to give up.
func TestSizingProof(t *testing.T) {
	plan := sizingProofPlan()
	if err := plan.Validate(); err != nil {
		t.Fatal(err)
	}
	under := plan
	under.MaxDeliveryAttempts = sizing.DeliveryAttemptsMin
	if err := under.Validate(); !errors.Is(err, sizing.ErrUnsafePlan) {
		t.Fatalf("Validate with %d attempts = %v, want ErrUnsafePlan: the control would not be below the plan's figure", under.MaxDeliveryAttempts, err)
	}
	t.Logf("plan: lease %s unrenewed, backoff %s, W %s, max delivery attempts %d; control: %d",
		plan.Lease, plan.MinBackoff, plan.Wait(), plan.MaxDeliveryAttempts, under.MaxDeliveryAttempts)
	t.Run(pubsubEmulator, func(t *testing.T) { sizingProof(t, plan, under) })
}

func sizingProof(t *testing.T, plan, under sizing.Plan) {
	eachBackend(t, 7, func(t *testing.T, b backend) {
		for _, tc := range []struct {
			name     string
			attempts int
		}{{"plan", plan.MaxDeliveryAttempts}, {"fewer-attempts", under.MaxDeliveryAttempts}} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				sizingRun(t, b, plan, tc.attempts, tc.attempts < plan.MaxDeliveryAttempts)
			})
		}
	})
}

func sizingRun(t *testing.T, b backend, plan sizing.Plan, attempts int, wantDead bool) {
	var crashed atomic.Bool
	w := newWorld(t, b, worldOptions{Plan: plan, SubscriptionAttempts: attempts, KeyAttribute: "order_id", PubSub: pubsubEmulator}, func(w *world) {
		w.rec.hook = func(c call) (int, bool) {
			if c.Worker < 0 || !crashed.CompareAndSwap(false, true) {
				return 0, false
			}
			w.killWorker(c.Worker)
			w.restartInBackground(c.Worker)
			return http.StatusServiceUnavailable, true // the caller is gone: never committed
		}
	})
	id := w.publish(supplier.Order{Order: "PO-1"})
	w.waitSettled(settleTimeout)
	f := w.logFigures()
	ds := w.deliveriesOf(id)
	calls := w.rec.Calls()
	if !crashed.Load() || len(calls) == 0 {
		t.Fatalf("no holder was killed; calls %+v", calls)
	}
	if wantDead {
		dl := w.deadLettered(id)
		if dl == nil || len(ds) != attempts {
			t.Fatalf("want the message dead-lettered after %d deliveries; got %d deliveries, dead-lettered %v", attempts, len(ds), dl != nil)
		}
		if got := dl.GetAttributes()[attrDeadLetterCount]; got != strconv.Itoa(attempts) {
			t.Errorf("the dead letter says %s=%q; want %d", attrDeadLetterCount, got, attempts)
		}
		if f.SupplierOrders != 0 || len(calls) != 1 {
			t.Errorf("want no order at the supplier, only the killed holder's call; calls %+v", calls)
		}
		return
	}
	if w.deadLettered(id) != nil || w.ackedAttempt(w.subs[0], id) == 0 {
		t.Fatalf("want the message acked, not dead-lettered; %d deliveries", len(ds))
	}
	if len(ds) > attempts || f.InProgress == 0 {
		t.Errorf("want it to wait behind the dead holder (in-progress nacks) within %d deliveries; got %d; %s", attempts, len(ds), f)
	}
	if len(calls) != 2 || f.SupplierOrders != 1 || f.SupplierDuplicates != 0 {
		t.Fatalf("want the killed holder's call and one committed call; calls %+v", calls)
	}
	first, last := calls[0], calls[1]
	// The lease runs from the claim, an instant before the first call.
	if gap := last.Start.Sub(first.Start); gap < plan.Lease-500*time.Millisecond {
		t.Errorf("the order ran %s after the crash, before the %s lease lapsed", gap, plan.Lease)
	}
	if last.Fence <= first.Fence {
		t.Errorf("the reclaim carries fence %d, not above the dead holder's %d", last.Fence, first.Fence)
	}
	t.Logf("%s: crashed holder's fence %d; processed with fence %d after %s on delivery attempt %d of %d",
		b.name, first.Fence, last.Fence, last.Start.Sub(first.Start).Round(100*time.Millisecond), w.ackedAttempt(w.subs[0], id), attempts)
}
