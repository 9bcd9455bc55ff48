package e2e_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oncegate/oncegate/internal/pushbridge"
	"github.com/oncegate/oncegate/runtime/push"
)

// pushInfo is what the front end reads from a push before routing it.
type pushInfo struct {
	MessageID    string
	Attempt      int
	Attributes   map[string]string
	Subscription string
}

// route says where a push goes and what becomes of its answer.
type route struct {
	// Worker is the worker's index; −1 spreads over the live workers.
	Worker int
	// LoseAck forwards the push and, when the worker acks, answers 502 in its
	// place: the ack is lost on the way back, so Pub/Sub redelivers a message
	// that was processed (a transport redelivery).
	LoseAck bool
	// Detach answers 504 at once, as when Pub/Sub gives up on a push, while the
	// worker keeps processing it: the redelivery can reach another worker while
	// the first still runs.
	Detach bool
}

// frontEnd plays Cloud Run's front end: it spreads pushes over the live
// workers round-robin (a killed worker is out of rotation until it is ready
// again; a push in flight to it when it dies gets 502, a nack).
type frontEnd struct {
	w      *world
	route  func(p pushInfo) route
	lost   func(p pushInfo) // called when an ack was lost on purpose
	client *http.Client
	next   atomic.Uint64
	bg     sync.WaitGroup

	lostAcks, detached atomic.Int64
}

func newFrontEnd(w *world) *frontEnd {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return &frontEnd{w: w, client: &http.Client{Transport: tr}}
}

func (fe *frontEnd) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		rw.WriteHeader(http.StatusBadRequest)
		return
	}
	var p pushInfo
	if m, err := push.ParseEnvelope(body); err == nil {
		p = pushInfo{MessageID: m.MessageID, Attempt: m.DeliveryAttempt, Attributes: m.Attributes, Subscription: m.Subscription}
	}
	rt := route{Worker: -1}
	if fe.route != nil {
		rt = fe.route(p)
	}
	target := rt.Worker
	if target < 0 {
		if target = fe.pick(); target < 0 {
			rw.WriteHeader(http.StatusServiceUnavailable) // no instance ready
			return
		}
	}
	if rt.Detach {
		fe.detached.Add(1)
		fe.bg.Add(1)
		go func() {
			defer fe.bg.Done()
			_ = fe.forward(context.WithoutCancel(r.Context()), target, body)
		}()
		rw.WriteHeader(http.StatusGatewayTimeout)
		return
	}
	status := fe.forward(r.Context(), target, body)
	if rt.LoseAck && pushbridge.Acks(status) {
		fe.lostAcks.Add(1)
		if fe.lost != nil {
			fe.lost(p)
		}
		status = http.StatusBadGateway
	}
	rw.WriteHeader(status)
}

// pick returns the next live worker round-robin, or −1 when none is live.
func (fe *frontEnd) pick() int {
	n := len(fe.w.procs)
	start := int(fe.next.Add(1))
	for i := range n {
		if k := (start + i) % n; fe.w.up[k].Load() {
			return k
		}
	}
	return -1
}

// forward posts a push to worker i and returns its status; 502 when the worker
// cannot be reached or dies before it answers.
func (fe *frontEnd) forward(ctx context.Context, i int, body []byte) int {
	ctx, cancel := context.WithTimeout(ctx, fe.w.plan.AckDeadline+5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fe.w.procs[i].URL()+"/", bytes.NewReader(body))
	if err != nil {
		return http.StatusBadGateway
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := fe.client.Do(req)
	if err != nil {
		return http.StatusBadGateway
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
