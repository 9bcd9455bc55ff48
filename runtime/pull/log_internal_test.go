package pull

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
)

// TestLogResultFollowsTable: for every outcome in gate's ack table, pull's one
// line is at the table's level (gate.Outcome.LogLevel) and names the outcome
// and the table's ack; each outcome pull can produce has its own message
// (not the generic "delivery failed"), which says acked or nacked as the table
// does.
func TestLogResultFollowsTable(t *testing.T) {
	produced := map[gate.Outcome]bool{ // what handle and run can answer
		gate.OutcomeRan: true, gate.OutcomeDuplicate: true, gate.OutcomeInProgress: true,
		gate.OutcomeBodyFailed: true, gate.OutcomePermanent: true, gate.OutcomeNotRecorded: true,
		gate.OutcomeFencedOut: true, gate.OutcomeUnknown: true, gate.OutcomeStoreUnavailable: true,
		gate.OutcomeRejected: true, gate.OutcomeNoKey: true, gate.OutcomeStopping: true,
	}
	for _, o := range gate.Outcomes() {
		var buf bytes.Buffer
		log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
		(&Receiver{}).logResult(log, result{key: "ns:k", outcome: o, ack: o.Ack(), err: errors.New("e")})
		var line map[string]any
		if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
			t.Fatalf("%s: %v: %q", o, err, buf.String())
		}
		if line["level"] != o.LogLevel().String() || line["outcome"] != o.String() || line["ack"] != o.Ack() {
			t.Errorf("%s: level %v outcome %v ack %v, want the table's %s %s %v", o, line["level"], line["outcome"], line["ack"], o.LogLevel(), o, o.Ack())
		}
		msg, _ := line["msg"].(string)
		if produced[o] && strings.Contains(msg, "delivery failed") {
			t.Errorf("%s: generic message %q", o, msg)
		}
		if want := map[bool]string{true: "acked", false: "nacked"}[o.Ack()]; o != gate.OutcomeUnknown && !strings.Contains(msg, want) {
			t.Errorf("%s: message %q does not say %s", o, msg, want)
		}
	}
}
