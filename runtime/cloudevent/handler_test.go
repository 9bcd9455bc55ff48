package cloudevent_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/cloudevent"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/push"
)

const key = "orders:2070443601311544"

// TestBothModesShareOneKey sends the Eventarc event in binary mode, then in
// structured mode: the second is a duplicate.
func TestBothModesShareOneKey(t *testing.T) {
	store := memgate.New(nil)
	g, logs := newGate(t, store)
	var got []*cloudevent.Event
	h, err := cloudevent.NewHandler(g, func(_ context.Context, e *cloudevent.Event, c gate.Claim) error {
		got = append(got, e)
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bh, bb := binaryFixture(t)
	if res := send(t, h, bh, bb); res.StatusCode != 204 || res.Header.Get(push.HeaderOutcome) != "ran" {
		t.Fatalf("binary: %d %s", res.StatusCode, res.Header.Get(push.HeaderOutcome))
	}
	sh, sb := structuredFixture(t)
	if res := send(t, h, sh, sb); res.StatusCode != 204 || res.Header.Get(push.HeaderOutcome) != "duplicate" {
		t.Fatalf("structured: %d %s", res.StatusCode, res.Header.Get(push.HeaderOutcome))
	}
	if len(got) != 1 {
		t.Fatalf("ran %d times", len(got))
	}
	e := got[0]
	if e.CloudEvent.Type() != cloudevent.PubSubMessagePublished || e.Message == nil ||
		string(e.Message.Data) != `{"po":"PO-1044"}` || e.Message.Attributes["po_id"] != "PO-1044" ||
		e.Message.Subscription != "projects/example-project/subscriptions/eventarc-orders" {
		t.Errorf("event %+v message %+v", e.CloudEvent, e.Message)
	}
	if r, ok, _ := store.Inspect(context.Background(), key); !ok || r.State != gate.StateDone {
		t.Errorf("record %+v ok=%v", r, ok)
	}
	if strings.Contains(logs.String(), "PO-1044") {
		t.Error("payload logged")
	}
}

func TestStructuredModeParses(t *testing.T) {
	sh, sb := structuredFixture(t)
	req, _ := http.NewRequest(http.MethodPost, "/", nil)
	req.Header = sh
	e, err := cloudevent.ParseRequest(req, sb, 0)
	if err != nil {
		t.Fatal(err)
	}
	if e.Message.MessageID != "2070443601311544" || string(e.Message.Data) != `{"po":"PO-1044"}` {
		t.Errorf("message %+v", e.Message)
	}
	// The caller's request is not modified.
	if req.Body != nil {
		t.Error("ParseRequest set the caller's body")
	}
}

// TestMapping runs the ack-policy rows through the CloudEvent handler.
func TestMapping(t *testing.T) {
	bg := context.Background()
	tests := []struct {
		name    string
		backend func(*memgate.Store) gate.Backend
		setup   func(*memgate.Store)
		err     error
		status  int
		outcome string
	}{
		{name: "ran", status: 204, outcome: "ran"},
		{name: "in-progress", status: 503, outcome: "in-progress", setup: func(s *memgate.Store) {
			_, _ = s.Claim(bg, gate.ClaimRequest{Key: key, Token: "o", Lease: time.Hour, TTL: time.Hour})
		}},
		{name: "unknown", status: 503, outcome: "unknown", setup: func(s *memgate.Store) {
			r, _ := s.Claim(bg, gate.ClaimRequest{Key: key, Token: "o", Lease: time.Hour, TTL: time.Hour})
			_, _ = s.MarkUnknown(bg, key, r.Record.Fence)
		}},
		{name: "body-failed", status: 500, outcome: "body-failed", err: errors.New("boom")},
		{name: "permanent", status: 204, outcome: "permanent", err: gate.Permanent(errors.New("bad order"))},
		{name: "store-unavailable", status: 503, outcome: "store-unavailable",
			backend: func(s *memgate.Store) gate.Backend { return failingClaims{s} }},
		{name: "rejected", status: 409, outcome: "rejected", setup: func(s *memgate.Store) {
			_, _ = s.AdvanceFence(bg, key, gate.MaxFence, time.Hour)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memgate.New(nil)
			var b gate.Backend = store
			if tt.backend != nil {
				b = tt.backend(store)
			}
			if tt.setup != nil {
				tt.setup(store)
			}
			g, _ := newGate(t, b)
			h, _ := cloudevent.NewHandler(g, func(context.Context, *cloudevent.Event, gate.Claim) error { return tt.err }, nil)
			bh, bb := binaryFixture(t)
			res := send(t, h, bh, bb)
			if res.StatusCode != tt.status || res.Header.Get(push.HeaderOutcome) != tt.outcome {
				t.Errorf("got %d %s, want %d %s", res.StatusCode, res.Header.Get(push.HeaderOutcome), tt.status, tt.outcome)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	bh, bb := binaryFixture(t)
	without := func(name string) http.Header {
		h := bh.Clone()
		h.Del(name)
		return h
	}
	tests := []struct {
		name   string
		hdr    http.Header
		body   string
		status int
	}{
		{"plain JSON, no CloudEvent headers", http.Header{"Content-Type": {"application/json"}}, string(bb), 400},
		{"no ce-id", without("Ce-Id"), string(bb), 400},
		{"no ce-source", without("Ce-Source"), string(bb), 400},
		{"pubsub event without data", bh, "", 400},
		{"pubsub data with conflicting ids", bh, `{"message":{"messageId":"1","message_id":"2"}}`, 400},
		{"pubsub data not base64", bh, `{"message":{"messageId":"1","data":"%%"}}`, 400},
		{"structured, not JSON", http.Header{"Content-Type": {"application/cloudevents+json"}}, `{"specversion":`, 400},
		{"message data at the limit, envelope over it", bh, `{"message":{"messageId":"1","data":"` + strings.Repeat("QUFB", 5) + `RA=="}}`, 204},
		{"data over the limit", bh, `{"message":{"messageId":"1","data":"` + strings.Repeat("QUFB", 10) + `"}}`, 413},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memgate.New(nil)
			g, _ := newGate(t, store)
			ran := false
			h, _ := cloudevent.NewHandler(g, func(context.Context, *cloudevent.Event, gate.Claim) error { ran = true; return nil },
				&cloudevent.Options{MaxDataBytes: 16})
			res := send(t, h, tt.hdr, []byte(tt.body))
			if tt.status == 204 {
				if res.StatusCode != 204 || !ran {
					t.Errorf("status %d ran=%v", res.StatusCode, ran)
				}
				return
			}
			if res.StatusCode != tt.status || ran || store.Len() != 0 {
				t.Errorf("status %d (want %d) ran=%v records=%d", res.StatusCode, tt.status, ran, store.Len())
			}
		})
	}
}

func TestOtherEventTypesKeyedBySourceAndID(t *testing.T) {
	store := memgate.New(nil)
	g, _ := newGate(t, store)
	var msg *push.Message = &push.Message{}
	h, _ := cloudevent.NewHandler(g, func(_ context.Context, e *cloudevent.Event, _ gate.Claim) error {
		msg = e.Message
		return nil
	}, nil)
	hdr := http.Header{
		"Content-Type": {"application/json"}, "Ce-Specversion": {"1.0"}, "Ce-Id": {"evt-1"},
		"Ce-Type": {"google.cloud.storage.object.v1.finalized"}, "Ce-Source": {"//storage.googleapis.com/projects/_/buckets/b"},
	}
	if res := send(t, h, hdr, []byte(`{"name":"a.csv"}`)); res.StatusCode != 204 {
		t.Fatalf("status %d", res.StatusCode)
	}
	if msg != nil {
		t.Error("non-Pub/Sub event got a Message")
	}
	if _, ok, _ := store.Inspect(context.Background(), "orders://storage.googleapis.com/projects/_/buckets/b evt-1"); !ok {
		t.Error("record not keyed by source and id")
	}
}

func TestKeyFuncAndOIDCAndDisabled(t *testing.T) {
	bh, bb := binaryFixture(t)
	store := memgate.New(nil)
	g, _ := newGate(t, store)
	noop := func(context.Context, *cloudevent.Event, gate.Claim) error { return nil }

	h, _ := cloudevent.NewHandler(g, noop, &cloudevent.Options{KeyFunc: func(*cloudevent.Event) (string, error) { return "", nil }})
	if res := send(t, h, bh, bb); res.StatusCode != 500 || store.Len() != 0 {
		t.Errorf("empty key: %d records %d", res.StatusCode, store.Len())
	}
	h, _ = cloudevent.NewHandler(g, noop, &cloudevent.Options{AdapterOptions: push.AdapterOptions{OIDC: &push.OIDCConfig{
		Audience: "https://x", ServiceAccountEmail: "sa@p.iam.gserviceaccount.com", Validator: rejectAll{}}}})
	if res := send(t, h, bh, bb); res.StatusCode != 401 || store.Len() != 0 {
		t.Errorf("no token: %d records %d", res.StatusCode, store.Len())
	}
	ran := 0
	h, _ = cloudevent.NewHandler(nil, func(context.Context, *cloudevent.Event, gate.Claim) error { ran++; return nil },
		&cloudevent.Options{AdapterOptions: push.AdapterOptions{Disabled: true}})
	send(t, h, bh, bb)
	send(t, h, bh, bb)
	if ran != 2 {
		t.Errorf("disabled ran %d times, want 2", ran)
	}
	if _, err := cloudevent.NewHandler(g, nil, nil); err == nil {
		t.Error("nil func accepted")
	}
	if _, err := cloudevent.NewHandler(g, noop, &cloudevent.Options{MaxDataBytes: -1}); err == nil {
		t.Error("negative MaxDataBytes accepted")
	}
}
