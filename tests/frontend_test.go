package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/oncegate/oncegate/internal/pushbridge"
	"github.com/oncegate/oncegate/internal/supplier"
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

// frontEndHold is how long the front end holds a push while no worker is
// ready, as Cloud Run holds a request pending while instances start: up to
// 3.5 times the average startup time or 10 s, whichever is longer, then 429
// (Cloud Run, "About instance autoscaling", "Exceeding maximum instances",
// https://cloud.google.com/run/docs/about-instance-autoscaling).
const frontEndHold = 10 * time.Second

// frontEnd plays Cloud Run's front end: it spreads pushes over the live
// workers round-robin. A killed worker is out of rotation until it is ready
// again; a push that finds no worker ready waits for one (frontEndHold), and a
// push whose connection is refused (the worker died after it was picked) goes
// to the next one, since it never reached an instance. A push in flight to a
// worker when it dies gets 502, a nack: that delivery is lost to the crash, as
// it is on Cloud Run, and the plan's Margin budgets it (see tests/doc.go).
type frontEnd struct {
	w      *world
	route  func(p pushInfo) route
	lost   func(p pushInfo) // called when an ack was lost on purpose
	client *http.Client
	next   atomic.Uint64
	bg     sync.WaitGroup

	lostAcks, detached atomic.Int64
	// crashed counts pushes answered 502 because their worker died while it
	// had them, per message id.
	crashedMu sync.Mutex
	crashed   map[string]int
}

func newFrontEnd(w *world) *frontEnd {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return &frontEnd{w: w, client: &http.Client{Transport: tr}, crashed: map[string]int{}}
}

// readPush reads a push request's body and what the front end routes by;
// the pushInfo is zero when the body is not a push envelope.
func readPush(r *http.Request) (pushInfo, []byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return pushInfo{}, nil, err
	}
	var p pushInfo
	if m, err := push.ParseEnvelope(body); err == nil {
		p = pushInfo{MessageID: m.MessageID, Attempt: m.DeliveryAttempt, Attributes: m.Attributes, Subscription: m.Subscription}
	}
	return p, body, nil
}

func (fe *frontEnd) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	p, body, err := readPush(r)
	if err != nil {
		rw.WriteHeader(http.StatusBadRequest)
		return
	}
	status := fe.serve(r.Context(), p, body)
	if fe.w.pubsub == pubsubEmulator {
		fe.w.observePush(p, status)
	}
	rw.WriteHeader(status)
}

// serve routes one push and returns the answer for Pub/Sub.
func (fe *frontEnd) serve(ctx context.Context, p pushInfo, body []byte) int {
	rt := route{Worker: -1}
	if fe.route != nil {
		rt = fe.route(p)
	}
	if rt.Detach {
		target := rt.Worker
		if target < 0 {
			if target = fe.pick(ctx); target < 0 {
				return http.StatusTooManyRequests
			}
		}
		fe.detached.Add(1)
		fe.bg.Go(func() { _, _ = fe.forward(context.WithoutCancel(ctx), target, body) })
		return http.StatusGatewayTimeout
	}
	var status int
	for start := time.Now(); ; {
		if time.Since(start) > frontEndHold {
			return http.StatusTooManyRequests
		}
		target := rt.Worker
		if target < 0 {
			if target = fe.pick(ctx); target < 0 {
				return http.StatusTooManyRequests // no instance ready within the hold
			}
		}
		var reached bool
		if status, reached = fe.forward(ctx, target, body); reached || rt.Worker >= 0 {
			break
		}
	}
	if status == http.StatusBadGateway {
		fe.crashedMu.Lock()
		fe.crashed[p.MessageID]++
		fe.crashedMu.Unlock()
	}
	if rt.LoseAck && pushbridge.Acks(status) {
		fe.lostAcks.Add(1)
		if fe.lost != nil {
			fe.lost(p)
		}
		status = http.StatusBadGateway
	}
	return status
}

// pick returns the next live worker round-robin, waiting up to frontEndHold
// for one to be ready; −1 when none is.
func (fe *frontEnd) pick(ctx context.Context) int {
	n := len(fe.w.procs)
	deadline := time.Now().Add(frontEndHold)
	for {
		start := int(fe.next.Add(1))
		for i := range n {
			if k := (start + i) % n; fe.w.up[k].Load() {
				return k
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return -1
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// forward posts a push to worker i and returns its status, and whether the
// request reached the worker: a refused connection did not (the worker died
// after it was picked). A worker that dies before it answers gives 502.
func (fe *frontEnd) forward(ctx context.Context, i int, body []byte) (status int, reached bool) {
	ctx, cancel := context.WithTimeout(ctx, fe.w.plan.AckDeadline+5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fe.w.procs[i].URL()+"/", bytes.NewReader(body))
	if err != nil {
		return http.StatusBadGateway, true
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := fe.client.Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) && ctx.Err() == nil {
			return http.StatusBadGateway, false
		}
		return http.StatusBadGateway, true
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, true
}

// crashedMax returns the most pushes of one message that a worker's death
// cost (502), and the total.
func (fe *frontEnd) crashedMax() (most, total int) {
	fe.crashedMu.Lock()
	defer fe.crashedMu.Unlock()
	for _, n := range fe.crashed {
		most, total = max(most, n), total+n
	}
	return most, total
}

// TestFrontEndHoldsWhileNoWorkerIsReady: a push that arrives while every
// worker is down (killed, restarting) waits for one to be ready and is
// processed, as Cloud Run holds a request while it starts an instance; it is
// not refused, which would spend one of the message's delivery attempts on a
// restart (see tests/doc.go, "Deliveries lost to instance restarts").
func TestFrontEndHoldsWhileNoWorkerIsReady(t *testing.T) {
	t.Parallel()
	b := allBackends[len(allBackends)-1] // SQLite: needs no server
	w := newWorld(t, b, worldOptions{Workers: 2, KeyAttribute: "order_id"})
	for i := range w.procs {
		w.killWorker(i)
	}
	const down = 700 * time.Millisecond
	w.restarts.Go(func() {
		time.Sleep(down)
		for i := range w.procs {
			if err := w.restartWorker(i); err != nil {
				t.Error(err)
			}
		}
	})
	data, err := json.Marshal(supplier.Order{Order: "PO-HELD"})
	if err != nil {
		t.Fatal(err)
	}
	body, err := pushbridge.Envelope(&pubsubpb.PubsubMessage{MessageId: "held-1", Data: data,
		Attributes: map[string]string{"order_id": "PO-HELD"}}, w.topo.Subscription, 1)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp, err := http.Post(w.feSrv.URL+"/", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if waited := time.Since(start); !pushbridge.Acks(resp.StatusCode) || waited < down-100*time.Millisecond {
		t.Fatalf("push while no worker was ready: status %d after %s; want it held until a worker was back (%s) and acked", resp.StatusCode, waited, down)
	}
	if got := w.rec.sup.Report().Orders; got != 1 {
		t.Errorf("supplier orders %d, want 1", got)
	}
}
