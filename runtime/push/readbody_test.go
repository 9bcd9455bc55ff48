package push_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/push"
)

// TestReusedBodyBufferKeepsEveryMessage keeps each delivery's Message past its
// request while later requests reuse the handler's read buffers: every kept
// message must still hold its own data and id, in both envelope forms (an
// unwrapped body is the data itself, so the handler copies it).
func TestReusedBodyBufferKeepsEveryMessage(t *testing.T) {
	e := newEnv(t, nil, nil)
	var kept []*push.Message
	h, err := push.NewHandler(e.gate, func(_ context.Context, m *push.Message, _ gate.Claim) error {
		kept = append(kept, m)
		return nil
	}, &push.Options{AdapterOptions: push.AdapterOptions{Logger: e.log}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := range n {
		id := strconv.Itoa(1000 + i)
		data := bytes.Repeat([]byte{byte('a' + i)}, 100+i)
		var req *http.Request
		if i%2 == 0 {
			req = httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(envelope(id, data, 1)))
		} else {
			req = httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(data))
			req.Header.Set(push.HeaderMessageID, id)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNoContent {
			t.Fatalf("%s: status %d", id, rec.Code)
		}
	}
	if len(kept) != n {
		t.Fatalf("%d messages ran, want %d", len(kept), n)
	}
	for i, m := range kept {
		want := bytes.Repeat([]byte{byte('a' + i)}, 100+i)
		if m.MessageID != strconv.Itoa(1000+i) || !bytes.Equal(m.Data, want) {
			t.Errorf("message %d: id %q data %.12q… (%d bytes); a later request overwrote it", i, m.MessageID, m.Data, len(m.Data))
		}
	}
}

// TestBodyLongerThanDeclaredIsReadInFull sends bodies whose Content-Length
// understates them (a relay's bug, or a sender's lie): the declared length
// sizes only the first buffer, and the body is read in full.
func TestBodyLongerThanDeclaredIsReadInFull(t *testing.T) {
	e := newEnv(t, nil, nil)
	var got []byte
	h, err := push.NewHandler(e.gate, func(_ context.Context, m *push.Message, _ gate.Claim) error {
		got = m.Data
		return nil
	}, &push.Options{AdapterOptions: push.AdapterOptions{Logger: e.log}})
	if err != nil {
		t.Fatal(err)
	}
	for i, size := range []int{10, 5000, 20000} {
		data := bytes.Repeat([]byte("xyz"), size)
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(envelope("long-"+strconv.Itoa(i), data, 1)))
		req.ContentLength = 3
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNoContent || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes declared as 3: status %d, data %d bytes; want 204 and the whole data", len(data), rec.Code, len(got))
		}
	}
}

// TestEnvelopeData pins the data field's decoding, which reads the body's
// bytes without a string copy: escapes are unquoted first, null and "" are
// empty, and a value that is not a base64 string is malformed.
func TestEnvelopeData(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       string
		err        error
	}{
		{"padded", `"QUJD"`, "ABC", nil},
		{"two pads", `"QQ=="`, "A", nil},
		{"unpadded", `"QQ"`, "A", nil},
		{"url-safe", `"-_8"`, "\xfb\xff", nil},
		{"escaped", `"QU\u004aD"`, "ABC", nil},
		{"escaped slash", `"\/\/8="`, "\xff\xff", nil},
		{"null", `null`, "", nil},
		{"empty", `""`, "", nil},
		{"number", `12`, "", push.ErrMalformed},
		{"object", `{"a":1}`, "", push.ErrMalformed},
		{"not base64", `"not base64!"`, "", push.ErrMalformed},
		{"pad inside", `"QQ==QUJD"`, "", push.ErrMalformed},
	} {
		m, err := push.ParseEnvelope([]byte(`{"message":{"messageId":"1","data":` + tc.data + `}}`))
		switch {
		case tc.err != nil:
			if !errors.Is(err, tc.err) || strings.Contains(err.Error(), "base64!") {
				t.Errorf("%s: err %v, want %v without quoting the data", tc.name, err, tc.err)
			}
		case err != nil || string(m.Data) != tc.want || m.Data == nil:
			t.Errorf("%s: %q, %v; want %q (never nil)", tc.name, m.Data, err, tc.want)
		}
	}
}
