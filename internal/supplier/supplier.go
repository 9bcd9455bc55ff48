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
//
// New counts every accepted call, so a repeat shows as a duplicate order.
// NewIdempotent plays a supplier that honours Idempotency-Key the way payment
// and ordering APIs do: a call whose key is already committed is absorbed
// (answered 200 and counted as a repeat, not as a second order). Like many such
// APIs it looks the key up when the call arrives and stores it when the call
// commits, so two calls of one key that overlap both commit: the key protects
// against a repeat, never against a concurrent twin, which only the gateway's
// claim prevents. Every call is logged (Calls) with the worker that made it: a
// path /w/<n> names worker n.
package supplier

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
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

// Call is one request that reached the supplier.
type Call struct {
	// Worker is n of the request path /w/<n>, or -1.
	Worker int
	// Key is the Idempotency-Key header.
	Key string
	// Start is when the call arrived; End when it was answered.
	Start, End time.Time
	// Status is the answer.
	Status int
	// Committed says the call committed the order; Absorbed that it found the
	// key committed already and was answered as a repeat (NewIdempotent only).
	Committed, Absorbed bool
}

// Supplier is an http.Handler; its zero value is not usable, call New.
type Supplier struct {
	idempotent bool

	mu       sync.Mutex
	log      []Call
	calls    map[string]int // raw calls per key
	accepted map[string]int // 2xx answers per key
	fences   map[string]int64
	inside   map[string]int // calls in flight per entity
	stale    int            // calls refused for a fence lower than one seen
	overlaps int
}

// New returns an empty Supplier that commits every accepted call.
func New() *Supplier {
	return &Supplier{calls: map[string]int{}, accepted: map[string]int{}, fences: map[string]int64{},
		inside: map[string]int{}}
}

// NewIdempotent returns an empty Supplier that absorbs a call whose key is
// already committed (see the package doc).
func NewIdempotent() *Supplier {
	s := New()
	s.idempotent = true
	return s
}

// Calls returns every call so far, in arrival order.
func (s *Supplier) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.log...)
}

// Report is what reached the supplier.
type Report struct {
	// Calls counts every request; Orders the distinct keys accepted; Duplicates
	// the accepted requests beyond one per key (must be 0); StaleFences the
	// requests refused for carrying a fence lower than one already seen for the
	// key; Overlaps the times two calls for one entity were in flight at once;
	// Repeats the calls absorbed as repeats of a committed key (NewIdempotent).
	Calls, Orders, Duplicates, StaleFences, Overlaps, Repeats int
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
	for _, c := range s.log {
		if c.Absorbed {
			r.Repeats++
		}
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
	c := Call{Worker: -1, Key: r.Header.Get("Idempotency-Key"), Start: time.Now()}
	if n, ok := strings.CutPrefix(r.URL.Path, "/w/"); ok {
		if i, err := strconv.Atoi(n); err == nil {
			c.Worker = i
		}
	}
	c.Status, c.Committed, c.Absorbed = s.serve(w, r, c.Key)
	c.End = time.Now()
	s.mu.Lock()
	s.log = append(s.log, c)
	s.mu.Unlock()
}

// serve answers one call and says whether it committed the order or was
// absorbed as a repeat.
func (s *Supplier) serve(w http.ResponseWriter, r *http.Request, key string) (status int, committed, absorbed bool) {
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
		return http.StatusConflict, false, false
	}
	s.fences[key] = max(s.fences[key], fence)
	if s.idempotent && s.accepted[key] > 0 {
		s.mu.Unlock()
		w.Header().Set("Idempotent-Replayed", "true")
		w.WriteHeader(http.StatusOK)
		return http.StatusOK, false, true
	}
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
		}
		if r.Context().Err() != nil {
			return 0, false, false // the caller gave up: nothing is committed
		}
	}
	switch {
	case o.Poison:
		http.Error(w, "order rejected", http.StatusUnprocessableEntity)
		return http.StatusUnprocessableEntity, false, false
	case n <= o.FailTimes:
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return http.StatusServiceUnavailable, false, false
	}
	s.mu.Lock()
	s.accepted[key]++
	s.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
	return http.StatusCreated, true, false
}
