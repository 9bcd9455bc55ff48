package demo

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/supplier"
)

// TestMakeOrdersHasOnePoison checks that every accepted order count has
// exactly one poison order, so n orders are n−1 distinct orders, as the README
// and --help say.
func TestMakeOrdersHasOnePoison(t *testing.T) {
	for _, n := range []int{MinOrders, 3, 7, 8, 9, 60, DefaultOrders} {
		poison := 0
		for _, o := range makeOrders(n, 1, 1000) {
			if o.body.Poison {
				poison++
			}
		}
		if poison != 1 {
			t.Errorf("makeOrders(%d): %d poison orders, want 1", n, poison)
		}
	}
}

func TestCheckSize(t *testing.T) {
	for _, tc := range []struct {
		orders, workers int
		want            string // "" when accepted
	}{
		{DefaultOrders, DefaultWorkers, ""},
		{MinOrders, MinWorkers, ""},
		{1, 3, "--orders 1: want 2 or more (one order is the poison message"},
		{0, 3, "--orders 0: want 2 or more"},
		{-5, 3, "--orders -5: want 2 or more"},
		{300, 0, "--workers 0: want 1 or more"},
		{300, -1, "--workers -1: want 1 or more"},
	} {
		err := CheckSize(tc.orders, tc.workers)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckSize(%d, %d) = %v, want %q", tc.orders, tc.workers, err, tc.want)
		}
	}
}

// TestRetryPolicyLine checks the plan line states what the subscription
// really has: the plan's backoff on the embedded fake, no retry policy on the
// emulator.
func TestRetryPolicyLine(t *testing.T) {
	for _, tc := range []struct {
		pubsub string
		pull   bool
		want   string
	}{
		{PubSubEmbedded, false, "backoff 1s–1s"},
		{PubSubEmbedded, true, "backoff 1s–1s"},
		{PubSubEmulator, false, "no retry policy (the emulator redelivers a refused push after about 1s)"},
		{PubSubEmulator, true, "no retry policy (the emulator redelivers a nacked message at once)"},
	} {
		r := &run{o: Options{PubSub: tc.pubsub, Pull: tc.pull}, plan: Plan()}
		if got := r.retryPolicy(); got != tc.want {
			t.Errorf("pubsub %s, pull %v: %q, want %q", tc.pubsub, tc.pull, got, tc.want)
		}
	}
}

// TestTimedOutReport checks a timed-out run's report: every order with a
// waiting message is a problem (the poison order and an order held but not
// yet acked included), the count the verdict states is the count listed, and
// the verdict says the run is incomplete instead of blaming the guarantees.
func TestTimedOutReport(t *testing.T) {
	r := &run{o: Options{Timeout: 5 * time.Second, Namespace: "demo-x"}, plan: Plan()}
	msg := func(id string, o supplier.Order) message { return message{id: id, o: order{body: o}} }
	lost := supplier.Order{Order: "PO-00002"}
	msgs := []message{
		msg("1", supplier.Order{Order: "PO-00001"}),
		msg("2", lost), msg("3", lost), // republished: two messages, one order
		msg("4", supplier.Order{Order: "PO-00008", Poison: true}),
		msg("5", supplier.Order{Order: "PO-00009"}), // held, not yet acked
	}
	r.acked.Store("1", true)
	rep := Report{DistinctOrders: 3, SupplierOrders: 2, Missing: 1,
		Problems: []Problem{{Order: "PO-00002", Why: notHeld}}}
	r.timedOut(&rep, msgs[1:], msgs, nil)
	if want := "timed out after 5s waiting for 4 messages of 3 orders"; rep.Incomplete != want {
		t.Errorf("Incomplete = %q, want %q", rep.Incomplete, want)
	}
	var got []string
	for _, p := range rep.Problems {
		got = append(got, p.Order)
	}
	if fmt.Sprint(got) != "[PO-00002 PO-00008 PO-00009]" {
		t.Errorf("problems name %v, want the 3 waiting orders", got)
	}
	if rep.OK() || rep.Violated() {
		t.Errorf("a timed-out run with no violation: OK %v, Violated %v; want neither", rep.OK(), rep.Violated())
	}
	var b strings.Builder
	rep.print(&b)
	out := b.String()
	for _, want := range []string{"INCOMPLETE: timed out after 5s waiting for 4 messages of 3 orders; raise --timeout",
		"problem: PO-00008 is the poison order, not yet dead-lettered", "not yet at the supplier", "problem: PO-00002 is not at the supplier yet"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"FAILED", "lost orders", "(must be 0)\n  lost"} {
		if strings.Contains(out, bad) {
			t.Errorf("a timed-out report says %q:\n%s", bad, out)
		}
	}
	rep.UnexplainedRepeats = 1
	b.Reset()
	rep.print(&b)
	if !strings.Contains(b.String(), "FAILED: ") || strings.Contains(b.String(), "INCOMPLETE") {
		t.Errorf("a timed-out run with an unexplained repeat must fail:\n%s", b.String())
	}
}
