package push_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/push"
)

// FuzzKeyPath drives the key function path end to end: a wrapped push whose
// business key is an attribute, through NewHandler and the gate, into a store.
// Whatever the key's bytes, a usable key runs the body once with the key
// "<namespace>:<key>" byte for byte, stores the record under exactly that key,
// and the next message with the same key is acknowledged as a duplicate without
// running; an empty key fails closed (500) and a key over DefaultMaxKeyBytes is
// refused (400), both with nothing stored. The message id
// never leaks into the key.
func FuzzKeyPath(f *testing.F) {
	for _, s := range []struct{ id, key string }{
		{"1", "PO-1042"}, {"2", ""}, {"3", "a\x00b"}, {"4", "\xff\xfe"}, {"5", "e\u0301"}, {"6", "orders:x"},
		{"7", "og-sha256:00"}, {"", "k"}, {"8", "{tag}"}, {"9", "'; DROP TABLE x; --"},
	} {
		f.Add(s.id, s.key)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	f.Fuzz(func(t *testing.T, id, key string) {
		store := memgate.New(nil)
		g, err := gate.New(store, &gate.Options{Namespace: "orders", Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		h, err := push.NewHandler(g, func(_ context.Context, _ *push.Message, c gate.Claim) error {
			got = append(got, c.Key)
			return nil
		}, &push.Options{AdapterOptions: push.AdapterOptions{Logger: quiet}, KeyFunc: func(m *push.Message) (string, error) { return m.Attributes["k"], nil }})
		if err != nil {
			t.Fatal(err)
		}
		// What the key is once it crossed JSON: encoding/json writes invalid UTF-8
		// as U+FFFD, so that is what a sender can put on the wire.
		attrs, _ := json.Marshal(map[string]string{"k": key})
		var wire map[string]string
		if err := json.Unmarshal(attrs, &wire); err != nil {
			t.Fatal(err)
		}
		want := wire["k"]
		send := func(msgID string) (int, string) {
			body, _ := json.Marshal(map[string]any{"message": map[string]any{"messageId": msgID, "attributes": wire}})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)))
			res := rec.Result()
			return res.StatusCode, res.Header.Get(push.HeaderOutcome)
		}
		status, outcome := send(id)
		if want == "" {
			if status != 500 || outcome != gate.OutcomeNoKey.String() || len(got) != 0 || store.Len() != 0 {
				t.Fatalf("empty key: %d %s, ran %d, %d records; want 500 no-key and nothing stored", status, outcome, len(got), store.Len())
			}
			return
		}
		if len(want) > push.DefaultMaxKeyBytes {
			if status != 400 || outcome != gate.OutcomeKeyTooLong.String() || len(got) != 0 || store.Len() != 0 {
				t.Fatalf("%d-byte key: %d %s, ran %d, %d records; want 400 key-too-long and nothing stored", len(want), status, outcome, len(got), store.Len())
			}
			return
		}
		if status != 204 || outcome != "ran" || len(got) != 1 || got[0] != "orders:"+want {
			t.Fatalf("key %q: %d %s, body saw %q; want 204 ran with %q", want, status, outcome, got, "orders:"+want)
		}
		rec, ok, err := store.Inspect(context.Background(), "orders:"+want)
		if err != nil || !ok || rec.Key != "orders:"+want || rec.State != gate.StateDone || store.Len() != 1 {
			t.Fatalf("record of %q: %+v %v %v (%d records)", want, rec, ok, err, store.Len())
		}
		if status, outcome = send(id + "-again"); status != 204 || outcome != "duplicate" || len(got) != 1 {
			t.Fatalf("second message with key %q: %d %s, ran %d times; want 204 duplicate", want, status, outcome, len(got))
		}
	})
}
