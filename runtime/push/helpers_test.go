package push_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"log/slog"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gatetest"
	"github.com/oncegate/oncegate/runtime/memgate"
)

// logBuf collects JSON log lines safely.
type logBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Lines returns the decoded lines at level (all levels when empty).
func (l *logBuf) Lines(t *testing.T, level string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if level == "" || m["level"] == level {
			out = append(out, m)
		}
	}
	return out
}

// env is one handler under test over a memgate store.
type env struct {
	store *memgate.Store
	clock *gatetest.Clock
	gate  *gate.Gate
	logs  *logBuf
	log   *slog.Logger
}

func newEnv(t *testing.T, b func(*memgate.Store) gate.Backend, gopts *gate.Options) *env {
	t.Helper()
	e := &env{clock: gatetest.NewClock(gatetest.Epoch), logs: &logBuf{}}
	e.store = memgate.New(&memgate.Options{Now: e.clock.Now})
	e.log = slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var o gate.Options
	if gopts != nil {
		o = *gopts
	}
	if o.Namespace == "" {
		o.Namespace = "orders"
	}
	o.Logger, o.Owner = e.log, "test/1"
	var backend gate.Backend = e.store
	if b != nil {
		backend = b(e.store)
	}
	g, err := gate.New(backend, &o)
	if err != nil {
		t.Fatal(err)
	}
	e.gate = g
	return e
}

// record returns the stored record of key (namespaced), failing when absent.
func (e *env) record(t *testing.T, key string) gate.Record {
	t.Helper()
	r, ok, err := e.store.Inspect(context.Background(), key)
	if err != nil || !ok {
		t.Fatalf("record %q: ok=%v err=%v", key, ok, err)
	}
	return r
}

// fixture reads a testdata file.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// post sends body to h and returns the response.
func post(t *testing.T, h http.Handler, body []byte, hdr http.Header) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

// envelope builds a wrapped push body.
func envelope(id string, data []byte, attempt int) []byte {
	m := map[string]any{"messageId": id, "message_id": id, "publishTime": "2026-11-30T10:15:02.123Z"}
	if data != nil {
		m["data"] = data // encoding/json writes []byte as standard base64
	}
	env := map[string]any{"message": m, "subscription": "projects/p/subscriptions/s"}
	if attempt > 0 {
		env["deliveryAttempt"] = attempt
	}
	b, _ := json.Marshal(env)
	return b
}

// faulty wraps a store and fails chosen calls.
type faulty struct {
	*memgate.Store
	claimErr    error
	completeErr error
}

func (f *faulty) Claim(ctx context.Context, req gate.ClaimRequest) (gate.ClaimResult, error) {
	if f.claimErr != nil {
		return gate.ClaimResult{}, f.claimErr
	}
	return f.Store.Claim(ctx, req)
}

func (f *faulty) Complete(ctx context.Context, c gate.Completion) (bool, error) {
	if f.completeErr != nil {
		return false, f.completeErr
	}
	return f.Store.Complete(ctx, c)
}

var errStore = errors.New("store: connection refused")
