package idemhttp_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/idemhttp"
	"github.com/oncegate/oncegate/runtime/memgate"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func setup(t *testing.T, opts *idemhttp.Options, h http.HandlerFunc) http.Handler {
	t.Helper()
	g, err := gate.New(memgate.New(nil), &gate.Options{Namespace: "api", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if opts == nil {
		opts = &idemhttp.Options{}
	}
	opts.Logger = quiet
	m, err := idemhttp.Middleware(g, h, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func do(h http.Handler, key, body string, mutate ...func(*http.Request)) *http.Response {
	r := httptest.NewRequest(http.MethodPost, "/charges", strings.NewReader(body))
	if key != "" {
		r.Header.Set("Idempotency-Key", key)
	}
	for _, m := range mutate {
		m(r)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

func read(r *http.Response) string { b, _ := io.ReadAll(r.Body); return string(b) }

func TestReplayStoredResponse(t *testing.T) {
	var runs atomic.Int32
	h := setup(t, nil, func(w http.ResponseWriter, r *http.Request) {
		n := runs.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Location", "/charges/ch_1")
		w.Header().Set("X-Not-Replayed", "1")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"run":%d,"echo":%q}`, n, body)
	})
	first := do(h, "k1", `{"cents":500}`)
	if first.StatusCode != 201 || first.Header.Get(idemhttp.ReplayHeader) != "" {
		t.Fatalf("first: %d replay=%q", first.StatusCode, first.Header.Get(idemhttp.ReplayHeader))
	}
	want := read(first)
	second := do(h, "k1", `{"cents":500}`)
	if second.StatusCode != 201 || read(second) != want || second.Header.Get(idemhttp.ReplayHeader) != "true" ||
		second.Header.Get("Location") != "/charges/ch_1" || second.Header.Get("X-Not-Replayed") != "" || runs.Load() != 1 {
		t.Fatalf("replay: %d %v runs=%d", second.StatusCode, second.Header, runs.Load())
	}
}

func TestStatusCodes(t *testing.T) {
	inside := make(chan struct{})
	release := make(chan struct{})
	h := setup(t, &idemhttp.Options{Required: true}, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("block") != "" {
			close(inside)
			<-release
		}
		w.WriteHeader(http.StatusOK)
	})
	if r := do(h, "", "x"); r.StatusCode != http.StatusBadRequest {
		t.Fatalf("missing key: %d, want 400", r.StatusCode)
	}
	if r := do(h, strings.Repeat("k", 256), "x"); r.StatusCode != http.StatusBadRequest {
		t.Fatalf("long key: %d, want 400", r.StatusCode)
	}
	done := make(chan *http.Response)
	go func() {
		done <- do(h, "k", "x", func(r *http.Request) { r.URL.RawQuery = "block=1" })
	}()
	<-inside
	if r := do(h, "k", "x", func(r *http.Request) { r.URL.RawQuery = "block=1" }); r.StatusCode != http.StatusConflict {
		t.Fatalf("concurrent same key: %d, want 409", r.StatusCode)
	}
	close(release)
	if r := <-done; r.StatusCode != http.StatusOK {
		t.Fatalf("first: %d", r.StatusCode)
	}
	if r := do(h, "k", "different body", func(r *http.Request) { r.URL.RawQuery = "block=1" }); r.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("same key, different payload: %d, want 422", r.StatusCode)
	}
}

func TestServerErrorIsNotStored(t *testing.T) {
	var runs atomic.Int32
	h := setup(t, nil, func(w http.ResponseWriter, r *http.Request) {
		if runs.Add(1) == 1 {
			http.Error(w, "upstream down", http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	if r := do(h, "k", "x"); r.StatusCode != http.StatusBadGateway {
		t.Fatalf("first: %d", r.StatusCode)
	}
	if r := do(h, "k", "x"); r.StatusCode != http.StatusAccepted || r.Header.Get(idemhttp.ReplayHeader) != "" {
		t.Fatalf("retry after 5xx: %d, want the handler to run again", r.StatusCode)
	}
	if runs.Load() != 2 {
		t.Fatalf("runs = %d", runs.Load())
	}
}

func TestPrincipalScopesKeys(t *testing.T) {
	h := setup(t, &idemhttp.Options{Principal: func(r *http.Request) (string, error) {
		p := r.Header.Get("X-Tenant")
		if p == "" {
			return "", errors.New("no tenant")
		}
		return p, nil
	}}, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "result for "+r.Header.Get("X-Tenant"))
	})
	tenant := func(n string) func(*http.Request) { return func(r *http.Request) { r.Header.Set("X-Tenant", n) } }
	if got := read(do(h, "shared", "x", tenant("a"))); got != "result for a" {
		t.Fatalf("tenant a: %q", got)
	}
	if got := read(do(h, "shared", "x", tenant("b"))); got != "result for b" {
		t.Fatalf("tenant b got %q; one tenant's key must never replay another's result", got)
	}
	if r := do(h, "shared", "x"); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no principal: %d, want 401", r.StatusCode)
	}
}

func TestNoKeyPassesThroughWhenOptional(t *testing.T) {
	var runs atomic.Int32
	h := setup(t, nil, func(w http.ResponseWriter, r *http.Request) { runs.Add(1) })
	do(h, "", "x")
	do(h, "", "x")
	if runs.Load() != 2 {
		t.Fatalf("runs = %d, want 2 (unguarded without a key)", runs.Load())
	}
}

// TestTransientAnswersAreNotStored: 408, 425 and 429 say "try again"; each is
// sent but not stored, so the retry runs the handler (it was replayed for the
// whole ttl). A final 4xx is stored and replayed.
func TestTransientAnswersAreNotStored(t *testing.T) {
	for _, tc := range []struct {
		first  int
		replay bool
	}{
		{http.StatusRequestTimeout, false}, {http.StatusTooEarly, false}, {http.StatusTooManyRequests, false},
		{http.StatusServiceUnavailable, false}, {http.StatusNotFound, true}, {http.StatusConflict, true},
	} {
		var runs atomic.Int32
		h := setup(t, nil, func(w http.ResponseWriter, r *http.Request) {
			if runs.Add(1) == 1 {
				w.WriteHeader(tc.first)
				return
			}
			w.WriteHeader(http.StatusCreated)
		})
		if r := do(h, "k", "x"); r.StatusCode != tc.first {
			t.Fatalf("%d: first answer %d", tc.first, r.StatusCode)
		}
		r := do(h, "k", "x")
		if tc.replay {
			if r.StatusCode != tc.first || r.Header.Get(idemhttp.ReplayHeader) != "true" || runs.Load() != 1 {
				t.Errorf("final %d: retry got %d (replayed %q), %d runs; want the stored answer", tc.first, r.StatusCode, r.Header.Get(idemhttp.ReplayHeader), runs.Load())
			}
			continue
		}
		if r.StatusCode != http.StatusCreated || r.Header.Get(idemhttp.ReplayHeader) != "" || runs.Load() != 2 {
			t.Errorf("transient %d: retry got %d (replayed %q), %d runs; want the handler to run again", tc.first, r.StatusCode, r.Header.Get(idemhttp.ReplayHeader), runs.Load())
		}
	}
}
