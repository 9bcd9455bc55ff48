package gate_test

import (
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/sizing"
)

// TestZeroOptionsAreASafePushPlan pins the promise of gate.Options' zero
// value: it is a plan the sizing package accepts for a push subscription left
// at Pub/Sub's defaults, and its TTL outlives every redelivery any retry and
// dead-letter policy Pub/Sub accepts can make.
func TestZeroOptionsAreASafePushPlan(t *testing.T) {
	g, err := gate.New(memgate.New(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := g.Options()
	p := sizing.Plan{Lease: o.Lease, TTL: o.TTL, Heartbeat: o.Heartbeat, WorkDeadline: o.WorkDeadline,
		StoreTimeout: o.StoreTimeout, AckDeadline: sizing.PubSubDefaultAckDeadline}
	if err := p.Validate(); err != nil {
		t.Errorf("the zero gate.Options as a plan under Pub/Sub's default 10s ack deadline: %v", err)
	}
	worst := p
	worst.AckDeadline, worst.MaxBackoff, worst.MaxDeliveryAttempts = sizing.AckDeadlineMax, sizing.RetryBackoffMax, sizing.DeliveryAttemptsMax
	if h := worst.Horizon(); o.TTL < h {
		t.Errorf("DefaultTTL %s is shorter than the longest redelivery horizon Pub/Sub allows, %s", o.TTL, h)
	}
	if o.WorkDeadline != gate.DefaultWorkDeadline || o.Lease != gate.DefaultLease || o.StoreTimeout != gate.DefaultStoreTimeout {
		t.Errorf("defaults not applied: %+v", o)
	}
}
