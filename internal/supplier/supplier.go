// Package supplier is the recording supplier the demo and the end-to-end tests
// put behind the reference worker: it plays a payment or ordering API that is
// slow, fails, or rejects on cue, and it counts what reached it, keyed by the
// Idempotency-Key header, so a run can prove every distinct order arrived exactly
// once.
//
// An order is a JSON body {"order": "...", "slow_ms": N, "fail_times": N,
// "poison": bool, "entity": "..."}: slow_ms delays the answer to the key's first
// call, fail_times answers 503 to the first N calls of the key, poison always
// answers 422, and entity names a resource whose calls must never overlap (mutex
// runs). Like a transactional API, the supplier commits an order only if the
// caller is still waiting: a call whose client gave up (the worker's work
// deadline) is not accepted.
package supplier

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Order is the body the supplier understands.
type Order struct {
	Order     string `json:"order"`
	SlowMS    int    `json:"slow_ms,omitempty"`
	FailTimes int    `json:"fail_times,omitempty"`
	Poison    bool   `json:"poison,omitempty"`
	Entity    string `json:"entity,omitempty"`
}

// Supplier is an http.Handler; its zero value is not usable, call New.
type Supplier struct {
	mu       sync.Mutex
	calls    map[string]int // raw calls per key
	accepted map[string]int // 2xx answers per key
	fences   map[string]int64
	inside   map[string]int // calls in flight per entity
	stale    int            // calls refused for a fence lower than one seen
	overlaps int
}

// New returns an empty Supplier.
func New() *Supplier {
	return &Supplier{calls: map[string]int{}, accepted: map[string]int{}, fences: map[string]int64{},
		inside: map[string]int{}}
}

// Report is what reached the supplier.
type Report struct {
	// Calls counts every request; Orders the distinct keys accepted; Duplicates
	// the accepted requests beyond one per key (must be 0); StaleFences the
	// requests refused for carrying a fence lower than one already seen for the
	// key; Overlaps the times two calls for one entity were in flight at once.
	Calls, Orders, Duplicates, StaleFences, Overlaps int
	// Accepted lists the accepted keys, sorted.
	Accepted []string
}

// Report returns the counts so far.
func (s *Supplier) Report() Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := Report{StaleFences: s.stale, Overlaps: s.overlaps}
	for _, n := range s.calls {
		r.Calls += n
	}
	for k, n := range s.accepted {
		r.Orders++
		r.Duplicates += n - 1
		r.Accepted = append(r.Accepted, k)
	}
	sort.Strings(r.Accepted)
	return r
}

// Accepted returns how many times key was accepted.
func (s *Supplier) Accepted(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted[key]
}

func (s *Supplier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var o Order
	_ = json.Unmarshal(body, &o)
	fence, _ := strconv.ParseInt(r.Header.Get("X-Fencing-Token"), 10, 64)

	s.mu.Lock()
	s.calls[key]++
	n := s.calls[key]
	if fence > 0 && fence < s.fences[key] {
		s.stale++
		s.mu.Unlock()
		http.Error(w, "stale fencing token", http.StatusConflict)
		return
	}
	s.fences[key] = max(s.fences[key], fence)
	if o.Entity != "" {
		s.inside[o.Entity]++
		if s.inside[o.Entity] > 1 {
			s.overlaps++
		}
	}
	s.mu.Unlock()
	defer func() {
		if o.Entity != "" {
			s.mu.Lock()
			s.inside[o.Entity]--
			s.mu.Unlock()
		}
	}()

	if o.SlowMS > 0 && n == 1 {
		t := time.NewTimer(time.Duration(o.SlowMS) * time.Millisecond)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return // the caller gave up: nothing is committed
		}
	}
	switch {
	case o.Poison:
		http.Error(w, "order rejected", http.StatusUnprocessableEntity)
		return
	case n <= o.FailTimes:
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	s.mu.Lock()
	s.accepted[key]++
	s.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
}
