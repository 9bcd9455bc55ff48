package push_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/push"
)

func TestKeyRules(t *testing.T) {
	tests := []struct {
		name      string
		keyFunc   push.KeyFunc
		unguarded bool
		body      []byte
		status    int
		outcome   string
		ran       bool
		records   int
		fence     int64
	}{
		{name: "default key is the message id", body: envelope("m-1", nil, 0),
			status: 204, outcome: "ran", ran: true, records: 1, fence: 1},
		{name: "business key", keyFunc: func(m *push.Message) (string, error) { return "po:" + m.Attributes["po_id"], nil },
			body: fixture(t, "wrapped-full.json"), status: 204, outcome: "ran", ran: true, records: 1, fence: 1},
		{name: "empty key fails closed", keyFunc: func(*push.Message) (string, error) { return "", nil },
			body: envelope("m-2", nil, 0), status: 500, outcome: "no-key"},
		{name: "key error fails closed", keyFunc: func(*push.Message) (string, error) { return "x", errors.New("no po_id") },
			body: envelope("m-3", nil, 0), status: 500, outcome: "no-key"},
		{name: "no message id fails closed", body: []byte(`{"message":{"data":"aGk="}}`), status: 500, outcome: "no-key"},
		{name: "unguarded when allowed", keyFunc: func(*push.Message) (string, error) { return "", errors.New("none") },
			unguarded: true, body: envelope("m-4", nil, 0), status: 204, outcome: "ran", ran: true, fence: 0},
		{name: "unguarded body error nacks", keyFunc: func(*push.Message) (string, error) { return "", nil },
			unguarded: true, body: []byte(`{"message":{"messageId":"fail"}}`), status: 500, outcome: "body-failed", ran: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil, nil)
			ran, fence := false, int64(-1)
			h, err := push.NewHandler(e.gate, func(_ context.Context, m *push.Message, c gate.Claim) error {
				ran, fence = true, c.Fence
				if m.MessageID == "fail" {
					return errors.New("boom")
				}
				return nil
			}, &push.Options{AdapterOptions: push.AdapterOptions{AllowUnguarded: tt.unguarded}, KeyFunc: tt.keyFunc})
			if err != nil {
				t.Fatal(err)
			}
			res := post(t, h, tt.body, nil)
			if res.StatusCode != tt.status || res.Header.Get(push.HeaderOutcome) != tt.outcome {
				t.Fatalf("got %d %q, want %d %q", res.StatusCode, res.Header.Get(push.HeaderOutcome), tt.status, tt.outcome)
			}
			if ran != tt.ran || e.store.Len() != tt.records || (ran && fence != tt.fence) {
				t.Errorf("ran=%v fence=%d records=%d, want ran=%v fence=%d records=%d", ran, fence, e.store.Len(), tt.ran, tt.fence, tt.records)
			}
		})
	}
}

func TestBusinessKeyStored(t *testing.T) {
	e := newEnv(t, nil, nil)
	h, _ := push.NewHandler(e.gate, func(context.Context, *push.Message, gate.Claim) error { return nil },
		&push.Options{KeyFunc: func(m *push.Message) (string, error) { return "po:" + m.Attributes["po_id"], nil }})
	post(t, h, fixture(t, "wrapped-full.json"), nil)
	if r := e.record(t, "orders:po:PO-1042"); r.State != gate.StateDone {
		t.Errorf("state %s", r.State)
	}
}

func TestUnwrappedDelivery(t *testing.T) {
	e := newEnv(t, nil, nil)
	var got *push.Message
	h, _ := push.NewHandler(e.gate, func(_ context.Context, m *push.Message, _ gate.Claim) error {
		got = m
		return nil
	}, nil)
	hdr, body := readHTTPFixture(t, "unwrapped.http")
	if res := post(t, h, body, hdr); res.StatusCode != http.StatusNoContent {
		t.Fatalf("status %d", res.StatusCode)
	}
	if got.MessageID != "2070443601311543" || string(got.Data) != `{"po":"PO-1043","qty":1}` || got.Attributes["po_id"] != "PO-1043" {
		t.Errorf("got %+v", got)
	}
	e.record(t, "orders:2070443601311543")
	// A redelivery of the same message through the wrapped form is a duplicate:
	// both forms share the default key.
	wrapped := envelope("2070443601311543", body, 2)
	if res := post(t, h, wrapped, nil); res.Header.Get(push.HeaderOutcome) != "duplicate" {
		t.Errorf("wrapped redelivery: %s", res.Header.Get(push.HeaderOutcome))
	}
}

func TestMalformedIsRefusedWithoutClaim(t *testing.T) {
	for name, body := range map[string]string{
		"conflicting ids": `{"message":{"messageId":"1","message_id":"2"}}`,
		"invalid base64":  `{"message":{"messageId":"1","data":"%%%"}}`,
		"not JSON":        `{"message":`,
		"empty body":      ``,
	} {
		e := newEnv(t, nil, nil)
		ran := false
		h, _ := push.NewHandler(e.gate, func(context.Context, *push.Message, gate.Claim) error { ran = true; return nil }, nil)
		res := post(t, h, []byte(body), nil)
		if res.StatusCode != http.StatusBadRequest || res.Header.Get(push.HeaderOutcome) != "malformed" || ran || e.store.Len() != 0 {
			t.Errorf("%s: status %d ran=%v records=%d", name, res.StatusCode, ran, e.store.Len())
		}
	}
}

// failingBody yields part of an envelope, then err: a read deadline or a
// dropped connection mid-body.
type failingBody struct {
	part []byte
	err  error
}

func (b *failingBody) Read(p []byte) (int, error) {
	if len(b.part) == 0 {
		return 0, b.err
	}
	n := copy(p, b.part)
	b.part = b.part[n:]
	return n, nil
}

// TestUnreadBodyIsANackNotMalformed is the regression test of a body that
// stalled past the server's read deadline (or broke off) being answered 400
// "malformed", which walks the message to the dead-letter topic: it is 503
// "read-failed", a nack the retry policy redelivers, with no claim.
func TestUnreadBodyIsANackNotMalformed(t *testing.T) {
	for name, err := range map[string]error{
		"read deadline":   os.ErrDeadlineExceeded,
		"cut short":       io.ErrUnexpectedEOF,
		"connection lost": errors.New("read tcp: connection reset by peer"),
	} {
		e := newEnv(t, nil, nil)
		ran := false
		h, _ := push.NewHandler(e.gate, func(context.Context, *push.Message, gate.Claim) error { ran = true; return nil }, nil)
		req := httptest.NewRequest(http.MethodPost, "/", &failingBody{part: []byte(`{"message":{"messageId":"1"`), err: err})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get(push.HeaderOutcome) != gate.OutcomeReadFailed.String() || ran || e.store.Len() != 0 {
			t.Errorf("%s: status %d outcome %q ran=%v records=%d; want 503 %q, no run, no record",
				name, rec.Code, rec.Header().Get(push.HeaderOutcome), ran, e.store.Len(), gate.OutcomeReadFailed.String())
		}
		if rec.Code == http.StatusNoContent {
			t.Errorf("%s: %d acks", name, rec.Code)
		}
	}
}

func TestSizeLimits(t *testing.T) {
	const limit = 64
	tests := []struct {
		name   string
		body   []byte
		hdr    http.Header
		status int
	}{
		{"wrapped at the limit", envelope("a", bytes.Repeat([]byte("x"), limit), 0), nil, 204},
		{"wrapped data over the limit", envelope("b", bytes.Repeat([]byte("x"), limit+1), 0), nil, 413},
		{"body over the read cap, data under the limit", []byte(`{"message":{"messageId":"c","attributes":{"a":"` +
			strings.Repeat("z", int(push.MaxBodyBytes(limit))) + `"}}}`), nil, 413},
		{"unwrapped at the limit", bytes.Repeat([]byte("y"), limit), http.Header{push.HeaderMessageID: {"d"}}, 204},
		{"unwrapped over the limit", bytes.Repeat([]byte("y"), limit+1), http.Header{push.HeaderMessageID: {"e"}}, 413},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil, nil)
			h, _ := push.NewHandler(e.gate, func(context.Context, *push.Message, gate.Claim) error { return nil },
				&push.Options{MaxDataBytes: limit})
			res := post(t, h, tt.body, tt.hdr)
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tt.status)
			}
			if tt.status == 413 && e.store.Len() != 0 {
				t.Errorf("413 wrote %d records", e.store.Len())
			}
		})
	}
}

// TestDefaultSizeLimit sends Pub/Sub's largest message and one byte more.
func TestDefaultSizeLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates tens of megabytes")
	}
	e := newEnv(t, nil, nil)
	h, _ := push.NewHandler(e.gate, func(context.Context, *push.Message, gate.Claim) error { return nil }, nil)
	data := bytes.Repeat([]byte{0xff}, int(push.DefaultMaxDataBytes))
	if res := post(t, h, envelope("max", data, 0), nil); res.StatusCode != http.StatusNoContent {
		t.Errorf("10 MB message: status %d", res.StatusCode)
	}
	data = append(data, 0)
	if res := post(t, h, envelope("over", data, 0), nil); res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("10 MB + 1 message: status %d", res.StatusCode)
	}
	if push.DefaultMaxBodyBytes != push.MaxBodyBytes(push.DefaultMaxDataBytes) {
		t.Error("DefaultMaxBodyBytes disagrees with MaxBodyBytes")
	}
}

func TestDisabledPassThrough(t *testing.T) {
	e := newEnv(t, nil, nil)
	var claims []gate.Claim
	h, err := push.NewHandler(e.gate, func(_ context.Context, m *push.Message, c gate.Claim) error {
		claims = append(claims, c)
		if m.MessageID == "fail" {
			return errors.New("boom")
		}
		return nil
	}, &push.Options{AdapterOptions: push.AdapterOptions{Disabled: true, Logger: e.log}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if res := post(t, h, envelope("same", nil, 0), nil); res.StatusCode != http.StatusNoContent {
			t.Fatalf("status %d", res.StatusCode)
		}
	}
	if res := post(t, h, envelope("fail", nil, 0), nil); res.StatusCode != http.StatusInternalServerError {
		t.Errorf("disabled body error: status %d, want 500", res.StatusCode)
	}
	if len(claims) != 4 || claims[0].Fence != 0 || claims[0].Key != "orders:same" || e.store.Len() != 0 {
		t.Errorf("claims %+v, records %d; want 4 unguarded runs and no record", claims, e.store.Len())
	}
	warns := 0
	for _, l := range e.logs.Lines(t, "WARN") {
		if strings.Contains(l["msg"].(string), "ONCEGATE_DISABLED") {
			warns++
		}
	}
	if warns != 1 {
		t.Errorf("disabled warning logged %d times, want once", warns)
	}
	// Disabled needs no gate at all.
	if _, err := push.NewHandler(nil, func(context.Context, *push.Message, gate.Claim) error { return nil }, &push.Options{AdapterOptions: push.AdapterOptions{Disabled: true}}); err != nil {
		t.Errorf("disabled without a gate: %v", err)
	}
}

// TestUnguardedRunHasWorkDeadline checks an unguarded run gets the gate's work
// deadline and survives the client going away, like a guarded one.
func TestUnguardedRunHasWorkDeadline(t *testing.T) {
	e := newEnv(t, nil, &gate.Options{Lease: time.Minute, WorkDeadline: 30 * time.Second})
	var deadline time.Time
	var cancelled bool
	h, _ := push.NewHandler(e.gate, func(ctx context.Context, _ *push.Message, _ gate.Claim) error {
		deadline, _ = ctx.Deadline()
		cancelled = ctx.Err() != nil
		return nil
	}, &push.Options{AdapterOptions: push.AdapterOptions{AllowUnguarded: true}, KeyFunc: func(*push.Message) (string, error) { return "", nil }})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := newRecorder()
	h.ServeHTTP(rec, newRequest(envelope("u", nil, 0)).WithContext(ctx))
	if rec.Code != http.StatusNoContent || cancelled {
		t.Fatalf("status %d, cancelled %v", rec.Code, cancelled)
	}
	if d := time.Until(deadline); d <= 0 || d > 30*time.Second {
		t.Errorf("deadline in %s, want within 30s", d)
	}
}
