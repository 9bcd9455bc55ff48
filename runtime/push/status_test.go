package push_test

import (
	"net/http"
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/push"
)

// TestStatus pins the documented status of every outcome and checks that the
// status acks exactly when the core's ack policy says so.
func TestStatus(t *testing.T) {
	want := map[gate.Outcome]int{
		gate.OutcomeRan: 204, gate.OutcomeDuplicate: 204, gate.OutcomePermanent: 204,
		gate.OutcomeNotRecorded: 204, gate.OutcomeFencedOut: 204,
		gate.OutcomeInProgress: 503, gate.OutcomeUnknown: 503, gate.OutcomeStoreUnavailable: 503,
		gate.OutcomeBodyFailed: 500, gate.OutcomeRejected: 409, gate.OutcomeError: 500,
	}
	for o := gate.OutcomeRan; o <= gate.OutcomeError; o++ {
		got := push.Status(o)
		if w, ok := want[o]; !ok || got != w {
			t.Errorf("Status(%s) = %d, want %d", o, got, w)
		}
		if push.Acks(got) != o.Ack() {
			t.Errorf("Status(%s) = %d acks=%v, but the ack policy says %v", o, got, push.Acks(got), o.Ack())
		}
	}
}

func TestAcks(t *testing.T) {
	for code := 100; code < 600; code++ {
		want := code == 102 || code == 200 || code == 201 || code == 202 || code == 204
		if push.Acks(code) != want {
			t.Errorf("Acks(%d) = %v, want %v (%s)", code, !want, want, http.StatusText(code))
		}
	}
}
