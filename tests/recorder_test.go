package e2e_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/oncegate/oncegate/examples/cloudrun/worker"
	"github.com/oncegate/oncegate/internal/supplier"
)

// call is one request that reached the supplier.
type call struct {
	// Worker is the calling worker's index (each worker's SUPPLIER_URL ends in
	// /w/<index>).
	Worker     int
	Key, Order string
	Entity     string
	Fence      int64
	Start, End time.Time
	// Status is the supplier's answer (or the hook's).
	Status int
}

// recorder sits in front of the recording supplier: it logs every call with
// who made it and when, can hold each call inside the supplier for a while (so
// an overlap has room to show), and can intercept a call (hook).
type recorder struct {
	sup *supplier.Supplier
	// hold keeps every call inside for this long before the supplier answers.
	hold time.Duration
	// hook, when set, sees each call first; when it returns a status, the
	// supplier never sees the call (it was never committed) and that status is
	// the answer. It may block.
	hook func(c call) (status int, intercepted bool)

	mu    sync.Mutex
	calls []call
}

// statusClientGone records a call whose caller went away before the supplier
// answered (nginx's 499); nothing was committed.
const statusClientGone = 499

func newRecorder() *recorder { return &recorder{sup: supplier.New()} }

// workerSuffix is the path the worker with index i posts to.
func workerSuffix(i int) string { return "/w/" + strconv.Itoa(i) }

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var o supplier.Order
	_ = json.Unmarshal(body, &o)
	c := call{Worker: -1, Key: r.Header.Get(worker.HeaderIdempotencyKey), Order: o.Order, Entity: o.Entity, Start: time.Now()}
	if n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/w/")); err == nil {
		c.Worker = n
	}
	c.Fence, _ = strconv.ParseInt(r.Header.Get(worker.HeaderFencingToken), 10, 64)
	if rc.hook != nil {
		if status, ok := rc.hook(c); ok {
			c.Status, c.End = status, time.Now()
			rc.add(c)
			w.WriteHeader(status)
			return
		}
	}
	if rc.hold > 0 {
		t := time.NewTimer(rc.hold)
		select {
		case <-t.C:
		case <-r.Context().Done():
			// The caller died or gave up while the call was inside: like the
			// supplier, commit nothing.
			t.Stop()
			c.Status, c.End = statusClientGone, time.Now()
			rc.add(c)
			return
		}
	}
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	sw := &statusWriter{ResponseWriter: w}
	rc.sup.ServeHTTP(sw, r2)
	c.Status, c.End = sw.code(), time.Now()
	rc.add(c)
}

func (rc *recorder) add(c call) {
	rc.mu.Lock()
	rc.calls = append(rc.calls, c)
	rc.mu.Unlock()
}

// Calls returns the calls so far, in the order they ended.
func (rc *recorder) Calls() []call {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.calls)
}

// overlaps counts pairs of calls for one entity that were inside the supplier
// at the same time.
func overlaps(calls []call) int {
	by := map[string][]call{}
	for _, c := range calls {
		if c.Entity != "" {
			by[c.Entity] = append(by[c.Entity], c)
		}
	}
	n := 0
	for _, cs := range by {
		slices.SortFunc(cs, func(a, b call) int { return a.Start.Compare(b.Start) })
		for i := range cs {
			for j := i + 1; j < len(cs) && cs[j].Start.Before(cs[i].End); j++ {
				n++
			}
		}
	}
	return n
}

// statusWriter remembers the status written through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) code() int {
	if s.status == 0 {
		return http.StatusOK
	}
	return s.status
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
