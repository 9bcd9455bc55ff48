package function

import (
	"bufio"
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
)

// TestOnMessageRunsOncePerEvent posts the same Eventarc event twice: the
// supplier gets one order, and both deliveries are acked.
func TestOnMessageRunsOncePerEvent(t *testing.T) {
	var calls atomic.Int32
	supplier := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Idempotency-Key") != "fn:2070443601311544" || r.Header.Get("X-Fencing-Token") != "1" {
			t.Errorf("supplier headers = %v", r.Header)
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer supplier.Close()
	for k, v := range map[string]string{
		"ONCEGATE_BACKEND": "memory", "ONCEGATE_NAMESPACE": "fn", "ONCEGATE_LEASE": "60s",
		"ONCEGATE_HEARTBEAT": "20s", "ONCEGATE_WORK_DEADLINE": "30s", "SUPPLIER_URL": supplier.URL, "ONCEGATE_OIDC_DISABLED": "1",
	} {
		t.Setenv(k, v)
	}
	raw, err := os.ReadFile("testdata/eventarc-binary.http")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		head, body, _ := bytes.Cut(raw, []byte("\n\n"))
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(append(head, "\n\n"...))))
		if err != nil {
			t.Fatal(err)
		}
		in := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(bytes.TrimRight(body, "\r\n")))
		in.Header = req.Header.Clone()
		rec := httptest.NewRecorder()
		onMessage(rec, in)
		if s := rec.Result().StatusCode; s != http.StatusNoContent && s != http.StatusOK {
			t.Fatalf("delivery %d: status %d (%s), want an ack", i+1, s, rec.Body.String())
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("supplier calls = %d, want 1", calls.Load())
	}
}
