package cloudevent_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/oncegate/oncegate/runtime/cloudevent"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/push"
)

// TestUndecodableIDsRefused sends events whose key would be folded into
// U+FFFD by the JSON decoder: a non-Pub/Sub structured event with the id
// "sur-\ud800" (the key is "<source> <id>"), and a Pub/Sub event whose nested
// message id is "sur-\udfff". Each is 400 with nothing claimed; "sur-\ufffd"
// runs.
func TestUndecodableIDsRefused(t *testing.T) {
	_, pubsub := structuredFixture(t)
	other := `{"specversion":"1.0","type":"com.example.order","source":"//orders","id":"ID","data":{}}`
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"event id, lone surrogate", strings.Replace(other, "ID", `sur-\ud800`, 1), 400},
		{"event id, escaped U+FFFD", strings.Replace(other, "ID", `sur-\ufffd`, 1), 204},
		{"message id, lone surrogate", strings.ReplaceAll(string(pubsub), "2070443601311544", `sur-\udfff`), 400},
		{"message id, escaped U+FFFD", strings.ReplaceAll(string(pubsub), "2070443601311544", `sur-\ufffd`), 204},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memgate.New(nil)
			g, _ := newGate(t, store)
			ran := 0
			h, err := cloudevent.NewHandler(g, func(context.Context, *cloudevent.Event, gate.Claim) error { ran++; return nil }, nil)
			if err != nil {
				t.Fatal(err)
			}
			res := send(t, h, http.Header{"Content-Type": {"application/cloudevents+json"}}, []byte(tc.body))
			if res.StatusCode != tc.status {
				t.Fatalf("status %d (%s), want %d", res.StatusCode, res.Header.Get(push.HeaderOutcome), tc.status)
			}
			if tc.status == 400 && (ran != 0 || store.Len() != 0) {
				t.Errorf("refused: ran %d, %d records", ran, store.Len())
			}
			if tc.status == 204 && (ran != 1 || store.Len() != 1) {
				t.Errorf("accepted: ran %d, %d records", ran, store.Len())
			}
		})
	}
}
