package push_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/push"
)

func TestParseEnvelopeFixtures(t *testing.T) {
	tests := []struct {
		file    string
		id      string
		data    string
		attempt int
		attrs   map[string]string
		order   string
		publish string
	}{
		{"wrapped-full.json", "2070443601311540", `{"po":"PO-1042","qty":3}`, 3,
			map[string]string{"po_id": "PO-1042", "region": "eu"}, "PO-1042", "2026-11-30T10:15:02.123Z"},
		{"wrapped-no-dlq.json", "2070443601311541", "hello", 0, nil, "", "2026-11-30T10:15:03Z"},
		{"wrapped-attributes-only.json", "2070443601311542", "", 1,
			map[string]string{"event": "ping"}, "", "2026-11-30T10:15:04Z"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			m, err := push.ParseEnvelope(fixture(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			pt, _ := time.Parse(time.RFC3339Nano, tt.publish)
			if m.MessageID != tt.id || string(m.Data) != tt.data || m.DeliveryAttempt != tt.attempt ||
				!maps.Equal(m.Attributes, tt.attrs) || m.OrderingKey != tt.order || !m.PublishTime.Equal(pt) ||
				m.Subscription != "projects/example-project/subscriptions/orders-push" {
				t.Errorf("got %+v", m)
			}
			if m.Data == nil {
				t.Error("Data is nil, want empty")
			}
		})
	}
}

func TestParseEnvelopeRules(t *testing.T) {
	tests := []struct {
		name string
		body string
		err  error
		id   string
		data string
	}{
		{"only messageId", `{"message":{"messageId":"1"}}`, nil, "1", ""},
		{"only message_id", `{"message":{"message_id":"2"}}`, nil, "2", ""},
		{"both equal", `{"message":{"messageId":"3","message_id":"3"}}`, nil, "3", ""},
		{"ids differ", `{"message":{"messageId":"3","message_id":"4"}}`, push.ErrMalformed, "", ""},
		{"publish times differ", `{"message":{"messageId":"3","publishTime":"2026-01-01T00:00:00Z","publish_time":"2026-01-01T00:00:01Z"}}`, push.ErrMalformed, "", ""},
		{"publish times same instant", `{"message":{"messageId":"3","publishTime":"2026-01-01T00:00:00Z","publish_time":"2026-01-01T00:00:00.000Z"}}`, nil, "3", ""},
		{"bad publish time", `{"message":{"messageId":"3","publishTime":"yesterday"}}`, push.ErrMalformed, "", ""},
		{"null data", `{"message":{"messageId":"5","data":null}}`, nil, "5", ""},
		{"empty data", `{"message":{"messageId":"5","data":""}}`, nil, "5", ""},
		{"invalid base64", `{"message":{"messageId":"5","data":"not base64!"}}`, push.ErrMalformed, "", ""},
		{"unpadded base64", `{"message":{"messageId":"6","data":"aGVsbG8"}}`, nil, "6", "hello"},
		{"url-safe base64", `{"message":{"messageId":"6","data":"-_8="}}`, nil, "6", "\xfb\xff"},
		{"negative attempt", `{"message":{"messageId":"7"},"deliveryAttempt":-1}`, push.ErrMalformed, "", ""},
		{"fractional attempt", `{"message":{"messageId":"7"},"deliveryAttempt":1.5}`, push.ErrMalformed, "", ""},
		{"no message", `{"subscription":"s"}`, push.ErrMalformed, "", ""},
		{"null message", `{"message":null}`, push.ErrMalformed, "", ""},
		{"not an object", `[1,2]`, push.ErrMalformed, "", ""},
		{"not JSON", `hello`, push.ErrMalformed, "", ""},
		{"trailing garbage", `{"message":{"messageId":"8"}} x`, push.ErrMalformed, "", ""},
		{"attribute not a string", `{"message":{"messageId":"9","attributes":{"a":1}}}`, push.ErrMalformed, "", ""},
		{"unknown fields ignored", `{"message":{"messageId":"10","future":true},"extra":[1]}`, nil, "10", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := push.ParseEnvelope([]byte(tt.body))
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if err == nil && (m.MessageID != tt.id || string(m.Data) != tt.data) {
				t.Errorf("got id %q data %q", m.MessageID, m.Data)
			}
		})
	}
}

// TestParseEnvelopeErrorsHideBody checks that an error never quotes the body.
func TestParseEnvelopeErrorsHideBody(t *testing.T) {
	for _, body := range []string{`{"message":{"data":"S3CR3T`, `S3CR3T`, `{"message":{"attributes":{"a":["S3CR3T"]}}}`, `{"message":{"data":"S3CR3T!!"}}`} {
		_, err := push.ParseEnvelope([]byte(body))
		if err == nil || bytes.Contains([]byte(err.Error()), []byte("S3CR3T")) || bytes.Contains([]byte(err.Error()), []byte("'S'")) {
			t.Errorf("%s: err = %v", body, err)
		}
	}
}

// readHTTPFixture parses a raw HTTP request fixture.
func readHTTPFixture(t testing.TB, name string) (http.Header, []byte) {
	t.Helper()
	raw := fixture(t, name)
	head, body, ok := bytes.Cut(raw, []byte("\n\n"))
	if !ok {
		t.Fatalf("%s: no blank line before the body", name)
	}
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(append(head, "\n\n"...))))
	if err != nil {
		t.Fatal(err)
	}
	return req.Header, bytes.TrimRight(body, "\r\n")
}

func TestParseUnwrappedFixture(t *testing.T) {
	h, body := readHTTPFixture(t, "unwrapped.http")
	if !push.IsUnwrapped(h) {
		t.Fatal("fixture not recognised as unwrapped")
	}
	m, err := push.ParseUnwrapped(h, body)
	if err != nil {
		t.Fatal(err)
	}
	if m.MessageID != "2070443601311543" || string(m.Data) != `{"po":"PO-1043","qty":1}` ||
		m.Subscription != "projects/example-project/subscriptions/orders-push" ||
		!m.PublishTime.Equal(time.Date(2026, 11, 30, 10, 15, 5, 0, time.UTC)) || m.DeliveryAttempt != 0 {
		t.Errorf("got %+v", m)
	}
	if !maps.Equal(m.Attributes, map[string]string{"po_id": "PO-1043"}) {
		t.Errorf("attributes = %v (transport headers must not count)", m.Attributes)
	}
}

func TestParseUnwrappedRules(t *testing.T) {
	h := http.Header{}
	h.Set(push.HeaderMessageID, "1")
	h.Set(push.HeaderDeliveryAttempt, "4")
	h.Set(push.HeaderOrderingKey, "k")
	h.Set("Authorization", "Bearer x")
	h.Set("X-Cloud-Trace-Context", "abc")
	h.Set("Region", "eu")
	m, err := push.ParseUnwrapped(h, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.DeliveryAttempt != 4 || m.OrderingKey != "k" || m.Data == nil || len(m.Data) != 0 {
		t.Errorf("got %+v", m)
	}
	if keys := slices.Sorted(maps.Keys(m.Attributes)); !slices.Equal(keys, []string{"region"}) {
		t.Errorf("attribute names = %v, want [region]", keys)
	}
	for hdr, v := range map[string]string{push.HeaderDeliveryAttempt: "-1", push.HeaderPublishTime: "noon"} {
		bad := h.Clone()
		bad.Set(hdr, v)
		if _, err := push.ParseUnwrapped(bad, nil); !errors.Is(err, push.ErrMalformed) {
			t.Errorf("%s=%s: err = %v, want ErrMalformed", hdr, v, err)
		}
	}
}

func TestParseRequestForms(t *testing.T) {
	wrapped := fixture(t, "wrapped-full.json")
	uh, ub := readHTTPFixture(t, "unwrapped.http")
	if m, err := push.ParseRequest(http.Header{}, wrapped, push.EnvelopeAuto, 0); err != nil || m.MessageID != "2070443601311540" {
		t.Errorf("auto/wrapped: %v %v", m, err)
	}
	if m, err := push.ParseRequest(uh, ub, push.EnvelopeAuto, 0); err != nil || m.MessageID != "2070443601311543" {
		t.Errorf("auto/unwrapped: %v %v", m, err)
	}
	// Forced unwrapped takes even a JSON envelope as raw data.
	if m, err := push.ParseRequest(http.Header{}, wrapped, push.EnvelopeUnwrapped, 0); err != nil || !bytes.Equal(m.Data, wrapped) {
		t.Errorf("forced unwrapped: %v %v", m, err)
	}
	// Forced wrapped refuses a raw body even with metadata headers.
	if _, err := push.ParseRequest(uh, ub, push.EnvelopeWrapped, 0); !errors.Is(err, push.ErrMalformed) {
		t.Errorf("forced wrapped: %v", err)
	}
	if _, err := push.ParseRequest(http.Header{}, wrapped, push.EnvelopeAuto, 5); !errors.Is(err, push.ErrTooLarge) {
		t.Errorf("data over limit: %v", err)
	}
}

// FuzzParseEnvelope checks that any body parses or fails with ErrMalformed,
// never panics, and that a parsed message survives a round trip through the
// wrapped form.
func FuzzParseEnvelope(f *testing.F) {
	for _, name := range []string{"wrapped-full.json", "wrapped-no-dlq.json", "wrapped-attributes-only.json"} {
		f.Add(fixture(f, name))
	}
	f.Add([]byte(`{"message":{"messageId":"1","message_id":"2"}}`))
	f.Add([]byte(`{"message":{"data":"-_8"},"deliveryAttempt":0}`))
	f.Add([]byte(`{"message":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := push.ParseEnvelope(body)
		if err != nil {
			if !errors.Is(err, push.ErrMalformed) {
				t.Fatalf("error %v does not match ErrMalformed", err)
			}
			return
		}
		if m.Data == nil || m.DeliveryAttempt < 0 {
			t.Fatalf("invalid message %+v", m)
		}
		again, err := push.ParseEnvelope(rewrap(m))
		if err != nil {
			t.Fatalf("round trip: %v", err)
		}
		if again.MessageID != m.MessageID || !bytes.Equal(again.Data, m.Data) || !maps.Equal(again.Attributes, m.Attributes) ||
			again.DeliveryAttempt != m.DeliveryAttempt || !again.PublishTime.Equal(m.PublishTime) ||
			again.OrderingKey != m.OrderingKey || again.Subscription != m.Subscription {
			t.Fatalf("round trip changed %+v into %+v", m, again)
		}
	})
}

// rewrap writes m as Pub/Sub would.
func rewrap(m *push.Message) []byte {
	msg := map[string]any{"messageId": m.MessageID, "message_id": m.MessageID,
		"data": base64.StdEncoding.EncodeToString(m.Data), "attributes": m.Attributes, "orderingKey": m.OrderingKey}
	if !m.PublishTime.IsZero() {
		msg["publishTime"] = m.PublishTime.Format(time.RFC3339Nano)
	}
	env := map[string]any{"message": msg, "subscription": m.Subscription}
	if m.DeliveryAttempt > 0 {
		env["deliveryAttempt"] = m.DeliveryAttempt
	}
	b, _ := json.Marshal(env)
	return b
}
