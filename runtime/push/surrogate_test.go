package push_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/push"
)

// TestUndecodableKeysRefused sends, in pure-ASCII JSON, ids and business-key
// attributes that encoding/json would fold into U+FFFD ("sur-\ud800",
// "sur-\udfff" beside "sur-\ufffd"): each fold is refused with 400 before any
// claim, so no two messages share a key; a real U+FFFD, a surrogate pair and a
// literal backslash-u text run as keys of their own.
func TestUndecodableKeysRefused(t *testing.T) {
	for _, tc := range []struct {
		name, id string // id as JSON source text, between the quotes
		status   int
		key      string // the decoded key when it runs
	}{
		{"lone high surrogate", `sur-\ud800`, 400, ""},
		{"lone low surrogate", `sur-\udfff`, 400, ""},
		{"high surrogate then text", `sur-\ud800x`, 400, ""},
		{"two high surrogates", `sur-\ud800\ud800`, 400, ""},
		{"reversed pair", `sur-\ude00\ud83d`, 400, ""},
		{"raw invalid UTF-8", "sur-\xff", 400, ""},
		{"escaped U+FFFD", `sur-\ufffd`, 204, "sur-\ufffd"},
		{"surrogate pair", `sur-\ud83d\ude00`, 204, "sur-\U0001F600"},
		{"escaped backslash before u", `sur-\\ud800`, 204, `sur-\ud800`},
	} {
		for _, where := range []string{"id", "attribute"} {
			t.Run(tc.name+"/"+where, func(t *testing.T) {
				e := newEnv(t, nil, nil)
				var ran []string
				o := &push.Options{AdapterOptions: push.AdapterOptions{Logger: e.log}}
				msg := `{"messageId":"` + tc.id + `"}`
				if where == "attribute" {
					o.KeyFunc = func(m *push.Message) (string, error) { v, _ := m.Attribute("k"); return v, nil }
					msg = `{"messageId":"m-1","attributes":{"k":"` + tc.id + `"}}`
				}
				h, err := push.NewHandler(e.gate, func(_ context.Context, _ *push.Message, c gate.Claim) error {
					ran = append(ran, c.Key)
					return nil
				}, o)
				if err != nil {
					t.Fatal(err)
				}
				res := post(t, h, []byte(`{"message":`+msg+`}`), nil)
				if res.StatusCode != tc.status {
					t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
				}
				if tc.status == 400 {
					if len(ran) != 0 || e.store.Len() != 0 || res.Header.Get(push.HeaderOutcome) != gate.OutcomeMalformed.String() {
						t.Errorf("refused key: ran %v, %d records, outcome %q", ran, e.store.Len(), res.Header.Get(push.HeaderOutcome))
					}
					return
				}
				if len(ran) != 1 || ran[0] != "orders:"+tc.key {
					t.Errorf("ran %q, want one run of %q", ran, "orders:"+tc.key)
				}
			})
		}
	}
}

// FuzzParseEnvelopeKeepsKeys checks that an id ParseEnvelope accepts is the
// JSON string's exact decoding: every U+FFFD in it was written in the source,
// as the character or as its escape, never made by the decoder from a lone
// surrogate or a byte that is not UTF-8.
func FuzzParseEnvelopeKeepsKeys(f *testing.F) {
	for _, s := range []string{`sur-\ud800`, `sur-\udfff`, `sur-\ufffd`, "sur-\ufffd", `\ud83d\ude00`, `\\ud800`, "\xff", `\u00e9`, `a\"b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		body := []byte(`{"message":{"messageId":"` + src + `"}}`)
		m, err := push.ParseEnvelope(body)
		if err != nil {
			if !errors.Is(err, push.ErrMalformed) {
				t.Fatalf("error %v does not match ErrMalformed", err)
			}
			return
		}
		var direct struct {
			Message struct {
				MessageID string `json:"messageId"`
			} `json:"message"`
		}
		if err := json.Unmarshal(body, &direct); err != nil || direct.Message.MessageID != m.MessageID {
			t.Fatalf("id %q, encoding/json %q (%v)", m.MessageID, direct.Message.MessageID, err)
		}
		written := strings.Count(src, "\ufffd") + strings.Count(strings.ToLower(src), `\ufffd`)
		if got := strings.Count(m.MessageID, "\ufffd"); got > written || !utf8.ValidString(m.MessageID) {
			t.Fatalf("source %q decoded to %q: %d U+FFFD, %d written", src, m.MessageID, got, written)
		}
	})
}
