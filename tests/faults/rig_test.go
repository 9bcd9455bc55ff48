package faults_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncegate/oncegate/examples/cloudrun/worker"
	"github.com/oncegate/oncegate/internal/supplier"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/push"
)

// quietLog discards the gateway's logs (the figures say what happened).
var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// designStatus is docs/design.md's ack table, written out here rather than taken from
// gate.Outcome's HTTPStatus, so the adapter is checked against the design and not itself.
var designStatus = map[string]int{
	"ran": 204, "duplicate": 204, "permanent": 204, "not-recorded": 204, "fenced-out": 204,
	"in-progress": 503, "unknown": 503, "store-unavailable": 503,
	"body-failed": 500, "error": 500, "no-key": 500, "rejected": 409,
	"malformed": 400, "too-large": 413, "unauthenticated": 401, "forbidden": 403,
}

// ranBody says, per outcome, whether the body ran on the delivery that got it.
var ranBody = map[string]bool{
	"ran": true, "not-recorded": true, "fenced-out": true, "body-failed": true, "permanent": true,
	"duplicate": false, "in-progress": false, "unknown": false, "store-unavailable": false, "rejected": false,
}

// rigOptions configure a delivery rig.
type rigOptions struct {
	// Backends holds one backend per gateway instance (each with its own client
	// or pool, as separate Cloud Run instances have).
	Backends []gate.Backend
	// Gate is every instance's gate options; the namespace is set by the rig.
	Gate gate.Options
	// AckDeadline is how long a delivery may take before Pub/Sub counts it as a
	// nack and redelivers (the push request timeout). Default 5s.
	AckDeadline time.Duration
	// Backoff is the pause before a redelivery. Default 100ms.
	Backoff time.Duration
	// MaxAttempts bounds the deliveries of one copy of a message. Default 300.
	MaxAttempts int
	// Concurrency is how many messages are in flight at once. Default 8.
	Concurrency int
	// Span spreads the publications evenly over this long, so faults that come
	// and go meet messages at every stage. Zero publishes them all at once.
	Span time.Duration
	// DupEvery delivers every n-th message twice at once (Pub/Sub's
	// at-least-once duplicates). 0 means never.
	DupEvery int
	// AfterBody, when set, runs inside the body after the supplier call: the
	// middle of a delivery, between the effect and the complete.
	AfterBody func(key string)
}

// rig replays pushes to gateway instances the way Pub/Sub does, against the
// recording supplier, and checks every answer against the ack table.
type rig struct {
	t        *testing.T
	o        rigOptions
	ns       string
	sup      *supplier.Supplier
	supURL   string
	handlers []http.Handler

	deliveries atomic.Int64
	late       atomic.Int64
	slow       atomic.Int64 // answers slower than slowAfter
	inflight   sync.WaitGroup

	mu          sync.Mutex
	outcomes    map[string]int
	notRecorded map[string]int // per message id: answers not-recorded or body-failed
	violations  []string
}

type probeKey struct{}

// probe records whether the body ran during one delivery.
type probe struct{ ran atomic.Bool }

func newRig(t *testing.T, o rigOptions) *rig {
	t.Helper()
	if o.AckDeadline == 0 {
		o.AckDeadline = 5 * time.Second
	}
	if o.Backoff == 0 {
		o.Backoff = 100 * time.Millisecond
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = 300
	}
	if o.Concurrency == 0 {
		o.Concurrency = 8
	}
	r := &rig{t: t, o: o, ns: "ns" + fmt.Sprint(time.Now().UnixNano()), sup: supplier.New(), outcomes: map[string]int{}, notRecorded: map[string]int{}}
	srv := httptest.NewServer(r.sup)
	t.Cleanup(srv.Close)
	r.supURL = srv.URL
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	quiet := quietLog
	for i, b := range o.Backends {
		gopts := o.Gate
		gopts.Namespace, gopts.Owner, gopts.Logger = r.ns, fmt.Sprintf("instance-%d", i), quiet
		g, err := gate.New(b, &gopts)
		if err != nil {
			t.Fatal(err)
		}
		h, err := push.NewHandler(g, func(ctx context.Context, m *push.Message, c gate.Claim) error {
			if p, ok := ctx.Value(probeKey{}).(*probe); ok {
				p.ran.Store(true)
			}
			err := worker.Forward(ctx, client, r.supURL, m.Data, c)
			if o.AfterBody != nil {
				o.AfterBody(c.Key)
			}
			return err
		}, &push.Options{AdapterOptions: push.AdapterOptions{Logger: quiet}})
		if err != nil {
			t.Fatal(err)
		}
		r.handlers = append(r.handlers, h)
	}
	return r
}

// key is the gateway key (and the supplier's Idempotency-Key) of message id.
func (r *rig) key(id string) string { return r.ns + ":" + id }

// envelope is a wrapped push body for message id.
func envelope(id string, data []byte, attempt int) []byte {
	b, _ := json.Marshal(map[string]any{
		"message":         map[string]any{"messageId": id, "data": base64.StdEncoding.EncodeToString(data)},
		"subscription":    "projects/oncegate-faults/subscriptions/orders",
		"deliveryAttempt": attempt,
	})
	return b
}

// slowAfter is the answer time past which a delivery counts as slowed by a fault
// (a fault-free one takes a few milliseconds).
const slowAfter = 300 * time.Millisecond

// answer is one delivery's result.
type answer struct {
	status  int
	outcome string
	ran     bool
	late    bool // answered after the ack deadline: Pub/Sub saw a nack
}

// post delivers one push to instance i and waits for the answer or the ack
// deadline, whichever is first. A handler still running at the deadline goes on
// (as on Cloud Run); its answer is checked when it comes but acks nothing.
func (r *rig) post(i int, id string, data []byte, attempt int) answer {
	r.deliveries.Add(1)
	p := &probe{}
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), probeKey{}, p), r.o.AckDeadline)
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/", bytes.NewReader(envelope(id, data, attempt)))
	done := make(chan answer, 1)
	r.inflight.Add(1)
	go func() {
		defer r.inflight.Done()
		defer cancel()
		rec := httptest.NewRecorder()
		began := time.Now()
		r.handlers[i].ServeHTTP(rec, req)
		if time.Since(began) > slowAfter {
			r.slow.Add(1)
		}
		res := rec.Result()
		a := answer{status: res.StatusCode, outcome: res.Header.Get(push.HeaderOutcome), ran: p.ran.Load()}
		r.check(id, a)
		done <- a
	}()
	t := time.NewTimer(r.o.AckDeadline)
	defer t.Stop()
	select {
	case a := <-done:
		return a
	case <-t.C:
		r.late.Add(1)
		return answer{late: true}
	}
}

// check records a violation when an answer contradicts the ack table.
func (r *rig) check(id string, a answer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.outcomes[a.outcome]++
	if a.outcome == "not-recorded" || a.outcome == "body-failed" {
		r.notRecorded[id]++ // the effect may have landed without its record
	}
	want, known := designStatus[a.outcome]
	switch {
	case !known:
		r.violations = append(r.violations, fmt.Sprintf("%s: unknown outcome %q (status %d)", id, a.outcome, a.status))
	case a.status != want:
		r.violations = append(r.violations, fmt.Sprintf("%s: outcome %s answered %d; the ack table says %d", id, a.outcome, a.status, want))
	}
	if ran, ok := ranBody[a.outcome]; ok && ran != a.ran {
		r.violations = append(r.violations, fmt.Sprintf("%s: outcome %s with body ran=%v", id, a.outcome, a.ran))
	}
	if a.outcome == "rejected" || a.outcome == "error" {
		r.violations = append(r.violations, fmt.Sprintf("%s: outcome %s: no fault here may refuse a valid message", id, a.outcome))
	}
}

// deliver delivers one copy of a message until an instance acknowledges it, the
// message is acked elsewhere, or the attempts run out. It reports whether this
// copy was acked.
func (r *rig) deliver(ctx context.Context, id string, data []byte, first int, acked *atomic.Bool) bool {
	for attempt := 1; attempt <= r.o.MaxAttempts && ctx.Err() == nil && !acked.Load(); attempt++ {
		a := r.post((first+attempt-1)%len(r.handlers), id, data, attempt)
		if !a.late && a.status == http.StatusNoContent { // the one acking status the ack table uses
			acked.Store(true)
			return true
		}
		select {
		case <-ctx.Done():
		case <-time.After(r.o.Backoff):
		}
	}
	return false
}

// run publishes n messages and delivers them all (some twice at once), with
// during running alongside. It returns the figures (Class and Backend left to the
// caller) after every in-flight handler has answered.
func (r *rig) run(ctx context.Context, n int, during func(ctx context.Context)) figures {
	r.t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("m-%05d", i)
	}
	acked := make([]atomic.Bool, n)
	bg, stopBG := context.WithCancel(ctx)
	var bgDone sync.WaitGroup
	if during != nil {
		bgDone.Go(func() { during(bg) })
	}
	sem := make(chan struct{}, r.o.Concurrency)
	var wg sync.WaitGroup
	start := time.Now()
	for i, id := range ids {
		if r.o.Span > 0 {
			at := start.Add(r.o.Span * time.Duration(i) / time.Duration(n))
			select {
			case <-ctx.Done():
			case <-time.After(time.Until(at)):
			}
		}
		data, _ := json.Marshal(supplier.Order{Order: id})
		copies := 1
		if r.o.DupEvery > 0 && i%r.o.DupEvery == 0 {
			copies = 2
		}
		for c := range copies {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				r.deliver(ctx, id, data, i+c, &acked[i])
			})
		}
	}
	wg.Wait()
	stopBG()
	bgDone.Wait()
	r.inflight.Wait()

	rep := r.sup.Report()
	f := figures{Messages: n, Tried: int(r.deliveries.Load())}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, id := range ids {
		got := r.sup.Accepted(r.key(id))
		if got >= 1 {
			f.Processed++
		}
		if extra := got - 1; extra > 0 {
			if r.notRecorded[id] > 0 {
				f.Repeats += extra
			} else {
				f.Duplicates += extra
				r.t.Errorf("message %s: the supplier accepted it %d times and no delivery answered not-recorded or body-failed", id, got)
			}
		}
		if !acked[i].Load() || got == 0 {
			f.Losses++
			if f.Losses <= 5 {
				r.t.Errorf("message %s lost: acked=%v, accepted by the supplier %d times", id, acked[i].Load(), got)
			}
		}
	}
	if extra := rep.Orders - f.Processed; extra != 0 {
		r.t.Errorf("the supplier accepted %d keys that were never published", extra)
	}
	if rep.Duplicates != f.Duplicates+f.Repeats {
		r.t.Errorf("the supplier counts %d duplicates, the messages %d", rep.Duplicates, f.Duplicates+f.Repeats)
	}
	for _, v := range r.violations[:min(len(r.violations), 10)] {
		r.t.Errorf("ack table: %s", v)
	}
	if len(r.violations) > 10 {
		r.t.Errorf("ack table: … %d violations in all", len(r.violations))
	}
	f.Note = r.noteLocked(rep)
	return f
}

// noteLocked summarises the outcomes seen, for the report.
func (r *rig) noteLocked(rep supplier.Report) string {
	keys := slices.Sorted(maps.Keys(r.outcomes))
	parts := make([]string, 0, len(keys)+2)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, r.outcomes[k]))
	}
	if n := r.late.Load(); n > 0 {
		parts = append(parts, fmt.Sprintf("late answers %d", n))
	}
	if n := r.slow.Load(); n > 0 {
		parts = append(parts, fmt.Sprintf("slow answers %d", n))
	}
	if rep.StaleFences > 0 {
		parts = append(parts, fmt.Sprintf("stale fences refused %d", rep.StaleFences))
	}
	return strings.Join(parts, ", ")
}
