package gate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
)

// TestLeaseAndHeartbeatFloors: absurd plans are refused at construction,
// naming the field (a 1 ns heartbeat wrote 124,411 log lines for a 1 s body).
func TestLeaseAndHeartbeatFloors(t *testing.T) {
	for _, tc := range []struct {
		o    gate.Options
		want string // "" accepts
	}{
		{gate.Options{Lease: time.Nanosecond}, "Lease"},
		{gate.Options{Lease: gate.MinLease - 1, WorkDeadline: time.Millisecond}, "Lease"},
		{gate.Options{Lease: time.Second, Heartbeat: time.Nanosecond}, "Heartbeat"},
		{gate.Options{Lease: time.Second, Heartbeat: gate.MinHeartbeat - 1}, "Heartbeat"},
		{gate.Options{Lease: gate.MinLease}, ""},
		{gate.Options{Lease: time.Second, Heartbeat: gate.MinHeartbeat}, ""},
	} {
		_, err := gate.New(memgate.New(nil), &tc.o)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.o, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), "gate.Options."+tc.want) || !strings.Contains(err.Error(), "floor")):
			t.Errorf("lease %s heartbeat %s: err %v, want one naming %s and its floor", tc.o.Lease, tc.o.Heartbeat, err, tc.want)
		}
	}
}
