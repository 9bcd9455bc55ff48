package cloudevent_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/oncegate/oncegate/runtime/cloudevent"
	"github.com/oncegate/oncegate/runtime/push"
)

// FuzzParseRequest feeds arbitrary bodies in binary mode (with the fixture's
// ce- headers and a fuzzed type) and in structured mode: parsing succeeds or
// fails with ErrMalformed or ErrTooLarge, never panics.
func FuzzParseRequest(f *testing.F) {
	bh, bb := binaryFixture(f)
	_, sb := structuredFixture(f)
	f.Add(bb, false, cloudevent.PubSubMessagePublished)
	f.Add(sb, true, "")
	f.Add([]byte(`{"message":{"messageId":"1","message_id":"2"}}`), false, cloudevent.PubSubMessagePublished)
	f.Add([]byte(`{"specversion":"1.0","id":"x","source":"s","type":"t","data_base64":"aGk="}`), true, "")
	f.Add([]byte(`{}`), false, "other.type")
	f.Fuzz(func(t *testing.T, body []byte, structured bool, ceType string) {
		req, _ := http.NewRequest(http.MethodPost, "/", nil)
		if structured {
			req.Header.Set("Content-Type", "application/cloudevents+json")
		} else {
			req.Header = bh.Clone()
			req.Header.Set("Ce-Type", ceType)
		}
		e, err := cloudevent.ParseRequest(req, body, 1<<20)
		if err != nil {
			if !errors.Is(err, push.ErrMalformed) && !errors.Is(err, push.ErrTooLarge) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if e.CloudEvent.Validate() != nil {
			t.Fatal("accepted an invalid event")
		}
		if (e.Message != nil) != (e.CloudEvent.Type() == cloudevent.PubSubMessagePublished) {
			t.Fatalf("Message set=%v for type %q", e.Message != nil, e.CloudEvent.Type())
		}
		if _, err := cloudevent.DefaultKey(e); err != nil && e.Message == nil {
			t.Fatalf("DefaultKey failed on a non-Pub/Sub event: %v", err)
		}
	})
}
