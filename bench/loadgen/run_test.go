package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/push"
)

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for q, want := range map[float64]time.Duration{0.5: 50, 0.9: 90, 0.99: 99, 1: 100, 0.001: 1} {
		if got := percentile(d, q); got != want {
			t.Errorf("percentile(1..100, %v) = %d, want %d", q, got, want)
		}
	}
}

// TestRunSendsDistinctPushes runs a fixed number of requests against a server
// that parses each as a push, and checks every message id is new, the answers
// are counted, and the stats are sampled every -stats-every requests.
func TestRunSendsDistinctPushes(t *testing.T) {
	var seen idSet
	var statsCalls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			statsCalls.Add(1)
			_ = json.NewEncoder(w).Encode(map[string]int{"rss_bytes": 1})
			return
		}
		body, _ := io.ReadAll(r.Body)
		m, err := push.ParseEnvelope(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if !seen.add(m.MessageID) {
			http.Error(w, "duplicate id "+m.MessageID, http.StatusConflict)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	res, err := Run(Config{URL: srv.URL, Concurrency: 4, N: 200, IDPrefix: "t", DataBytes: 8, StatsURL: srv.URL, StatsEvery: 50})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 200 || res.Errors != 0 || res.Statuses[http.StatusNoContent] != 200 {
		t.Errorf("requests %d, errors %d, statuses %v; want 200 answered 204", res.Requests, res.Errors, res.Statuses)
	}
	if len(res.Samples) != 4 || statsCalls.Load() != 4 {
		t.Errorf("%d samples (%d stats calls), want 4 (every 50 of 200)", len(res.Samples), statsCalls.Load())
	}
	if res.P50Micros <= 0 || res.P99Micros < res.P50Micros || res.MaxMicros < res.P99Micros {
		t.Errorf("percentiles p50 %v p99 %v max %v are not ordered", res.P50Micros, res.P99Micros, res.MaxMicros)
	}
}

// idSet is a set of message ids safe for concurrent use.
type idSet struct {
	mu  sync.Mutex
	ids map[string]bool
}

// add reports whether id was new.
func (s *idSet) add(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids == nil {
		s.ids = map[string]bool{}
	}
	if s.ids[id] {
		return false
	}
	s.ids[id] = true
	return true
}
