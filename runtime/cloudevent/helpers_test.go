package cloudevent_test

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// binaryFixture returns the binary-mode fixture's headers and body.
func binaryFixture(t testing.TB) (http.Header, []byte) {
	t.Helper()
	head, body, ok := bytes.Cut(fixture(t, "eventarc-binary.http"), []byte("\n\n"))
	if !ok {
		t.Fatal("fixture has no body")
	}
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(append(head, "\n\n"...))))
	if err != nil {
		t.Fatal(err)
	}
	return req.Header, bytes.TrimRight(body, "\r\n")
}

func structuredFixture(t testing.TB) (http.Header, []byte) {
	t.Helper()
	return http.Header{"Content-Type": {"application/cloudevents+json"}}, fixture(t, "eventarc-structured.json")
}

func send(t *testing.T, h http.Handler, hdr http.Header, body []byte) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	for k, v := range hdr {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newGate(t *testing.T, b gate.Backend) (*gate.Gate, *syncBuf) {
	t.Helper()
	logs := &syncBuf{}
	g, err := gate.New(b, &gate.Options{Namespace: "orders",
		Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return g, logs
}

type failingClaims struct{ *memgate.Store }

func (failingClaims) Claim(context.Context, gate.ClaimRequest) (gate.ClaimResult, error) {
	return gate.ClaimResult{}, os.ErrDeadlineExceeded
}
