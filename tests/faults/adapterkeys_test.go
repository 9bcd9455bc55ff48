package faults_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"unicode/utf8"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/push"
)

// pushWith posts body to h and returns the status and outcome.
func pushWith(h http.Handler, body []byte) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)))
	res := rec.Result()
	return res.StatusCode, res.Header.Get(push.HeaderOutcome)
}

// TestHostileKeysThroughPush sends every hostile key a JSON envelope can carry
// (valid UTF-8: a JSON string cannot hold other bytes) as a business-key
// attribute through the push adapter: each runs once with the key byte for
// byte, the next message with the same key is acknowledged as a duplicate, and
// the record is stored under "<namespace>:<key>" exactly.
func TestHostileKeysThroughPush(t *testing.T) {
	store := memgate.New(nil)
	g, err := gate.New(store, &gate.Options{Namespace: "orders", Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	h, err := push.NewHandler(g, func(_ context.Context, m *push.Message, _ gate.Claim) error {
		got = append(got, m.Attributes["po_id"])
		return nil
	}, &push.Options{AdapterOptions: push.AdapterOptions{Logger: quietLog, MaxKeyBytes: 4 << 20}, KeyFunc: func(m *push.Message) (string, error) { return m.Attributes["po_id"], nil }}) // past the 1 MiB keys: this test is about byte-exactness, TestLongKeysAndLogLines about the limit
	if err != nil {
		t.Fatal(err)
	}
	f := figures{Class: "hostile keys through the push envelope", Backend: "memory"}
	for i, k := range hostileKeys() {
		if !utf8.ValidString(k) {
			continue
		}
		f.Messages++
		for round, want := range []string{"ran", "duplicate"} {
			f.Tried++
			body, _ := json.Marshal(map[string]any{"message": map[string]any{
				"messageId": fmt.Sprintf("m-%d-%d", i, round), "data": base64.StdEncoding.EncodeToString([]byte("x")),
				"attributes": map[string]string{"po_id": k}}})
			status, outcome := pushWith(h, body)
			if status != designStatus[want] || outcome != want {
				t.Errorf("key %s, delivery %d: %d %s; want %s", show(k), round+1, status, outcome, want)
			}
		}
		if len(got) == 0 || got[len(got)-1] != k {
			t.Errorf("key %s did not reach the body byte for byte", show(k))
			continue
		}
		if rec, ok, _ := store.Inspect(context.Background(), "orders:"+k); !ok || rec.Key != "orders:"+k || rec.State != gate.StateDone {
			t.Errorf("record of %s: %v %v", show(k), ok, rec.State)
			continue
		}
		f.Processed++
	}
	f.Duplicates = len(got) - f.Processed
	f.Note = "valid-UTF-8 hostile keys as an attribute: one run each, the second message a duplicate (204)"
	report(t, f)
}

// TestInvalidUTF8InEnvelope: raw bytes that are not UTF-8 inside a JSON string
// make the body invalid JSON (RFC 8259 §8.1). The adapter must refuse such a
// push (400) or keep the bytes; folding them to U+FFFD would make two different
// message ids one key, and the second message would be acknowledged as a
// duplicate without ever running.
func TestInvalidUTF8InEnvelope(t *testing.T) {
	g, err := gate.New(memgate.New(nil), &gate.Options{Namespace: "orders", Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	h, err := push.NewHandler(g, func(context.Context, *push.Message, gate.Claim) error { runs++; return nil },
		&push.Options{AdapterOptions: push.AdapterOptions{Logger: quietLog}})
	if err != nil {
		t.Fatal(err)
	}
	s1, o1 := pushWith(h, []byte("{\"message\":{\"messageId\":\"id-\xff\"}}"))
	s2, o2 := pushWith(h, []byte("{\"message\":{\"messageId\":\"id-\xfe\"}}"))
	switch {
	case s1 == 400 && s2 == 400:
		return // refused as malformed
	case o1 == "ran" && o2 == "ran" && runs == 2:
		return // kept byte for byte: two keys
	case o2 == "duplicate":
		t.Fatalf("message ids \"id-\\xff\" and \"id-\\xfe\" share one key: the second push was acked as a duplicate without running (answers %d %s, %d %s)", s1, o1, s2, o2)
	}
	t.Fatalf("answers %d %s and %d %s with %d runs; want both refused (400) or both run", s1, o1, s2, o2, runs)
}
