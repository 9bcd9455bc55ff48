package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/oncegate/oncegate/internal/demo"
	"github.com/oncegate/oncegate/internal/localpubsub"
	"github.com/oncegate/oncegate/internal/pushbridge"
	"github.com/oncegate/oncegate/internal/supplier"
	"github.com/oncegate/oncegate/internal/workerproc"
	"github.com/oncegate/oncegate/sizing"
)

// worldOptions shape one scenario's world. The zero value means defaults.
type worldOptions struct {
	// Workers is how many worker processes run. Default 2.
	Workers int
	// Plan is the plan the workers run with and the subscription is sized by.
	// Zero means demo.Plan(): a 3 s lease renewed every second, a 10 s work and
	// ack deadline, 1 s backoff.
	Plan sizing.Plan
	// SubscriptionAttempts, when positive, sets the subscription's max delivery
	// attempts instead of the plan's (a subscription that drifted from the plan;
	// the workers still get the plan).
	SubscriptionAttempts int
	// Mode is ONCEGATE_MODE (lock or mutex). Default lock.
	Mode string
	// KeyAttribute is ONCEGATE_KEY_ATTRIBUTE; empty keys by message id.
	KeyAttribute string
	// Subscriptions is how many push subscriptions the topic has, each with its
	// own bridge. Default 1.
	Subscriptions int
	// Concurrency is each bridge's deliveries in flight. Default 8.
	Concurrency int
	// Env is added to every worker's environment, after the rest.
	Env []string
	// PubSub is pubsubFake (the default: pstest and the push bridge) or
	// pubsubEmulator (Google's emulator pushing to the front end).
	PubSub string
	// NoRetryPolicy leaves the retry policy off the emulator's push
	// subscription (see tests/doc.go). The fake always has one.
	NoRetryPolicy bool
}

// world is one scenario's moving parts on one backend.
type world struct {
	t       *testing.T
	backend string
	// pubsub is the world's Pub/Sub (worldOptions.PubSub).
	pubsub  string
	pushing bool // the emulator's push subscription exists
	plan    sizing.Plan
	ctx     context.Context
	cancel  context.CancelFunc

	ps      *localpubsub.Fake
	topo    localpubsub.Topology
	subs    []string
	rec     *recorder
	supSrv  *httptest.Server
	procs   []*workerproc.Proc
	up      []atomic.Bool
	fe      *frontEnd
	feSrv   *httptest.Server
	bridges []*pushbridge.Bridge
	brStop  context.CancelFunc
	brDone  sync.WaitGroup
	book    *logBook
	// restarts tracks restarts in the background, waited for before close
	// stops the workers.
	restarts sync.WaitGroup
	// raceDir receives the workers' race reports (GORACE log_path) when the
	// suite runs with -race.
	raceDir string

	mu         sync.Mutex
	published  []string
	bySeq      map[string]string                // attrPublished → message id
	deliveries map[string][]pushbridge.Delivery // message id → every delivery, all subscriptions
	// pushCount counts the emulator's pushes per subscription and message id:
	// it sends no deliveryAttempt, so the front end numbers them.
	pushCount   map[string]map[string]int
	acked       map[string]map[string]int // subscription → message id → acking attempt
	deadLetters map[string]*pubsubpb.PubsubMessage
}

// newWorld builds a world on backend b: the pstest topology sized by the plan,
// the recorder in front of the supplier, the worker processes, the front end
// and one bridge per subscription. Everything stops when t ends. hooks run
// before the bridges start, so a test can set w.fe.route or w.rec.hook.
func newWorld(t *testing.T, b backend, o worldOptions, hooks ...func(w *world)) *world {
	t.Helper()
	o = o.withDefaults()
	benv := b.env(t) // before the world's cleanup: a Datastore fake outlives the workers
	ctx, cancel := context.WithCancel(context.Background())
	w := &world{t: t, backend: b.name, pubsub: o.PubSub, plan: o.Plan, ctx: ctx, cancel: cancel, book: newLogBook(),
		deliveries: map[string][]pushbridge.Delivery{}, acked: map[string]map[string]int{},
		deadLetters: map[string]*pubsubpb.PubsubMessage{}, pushCount: map[string]map[string]int{}, bySeq: map[string]string{}}
	w.raceDir = t.TempDir() // before close is registered, so it outlives close
	t.Cleanup(w.close)
	w.rec = newRecorder()
	w.supSrv = httptest.NewServer(w.rec)
	if o.PubSub == pubsubEmulator {
		if o.Subscriptions > 1 {
			t.Fatal("worldOptions.Subscriptions > 1 is not wired for the emulator")
		}
		w.startEmulatorWorld()
	} else {
		w.startFake(o)
	}
	w.startWorkers(o, benv)
	w.fe = newFrontEnd(w)
	w.feSrv = httptest.NewServer(w.fe)
	for _, h := range hooks {
		h(w)
	}
	if o.PubSub == pubsubEmulator {
		w.startPush(o)
	} else {
		w.startBridges(o.Concurrency)
	}
	return w
}

// startFake starts pstest with the topology, one subscription per
// o.Subscriptions.
func (w *world) startFake(o worldOptions) {
	t := w.t
	var err error
	if w.ps, err = localpubsub.Start(w.ctx, "oncegate-e2e"); err != nil {
		t.Fatal(err)
	}
	w.topo = w.ps.Names("orders")
	subPlan := o.Plan
	if o.SubscriptionAttempts > 0 {
		subPlan.MaxDeliveryAttempts = o.SubscriptionAttempts
	}
	if err := w.ps.Create(w.ctx, w.topo, subPlan); err != nil {
		t.Fatal(err)
	}
	w.subs = []string{w.topo.Subscription}
	for i := 2; i <= o.Subscriptions; i++ {
		name := fmt.Sprintf("%s-%d", w.topo.Subscription, i)
		if err := w.createSubscription(name, subPlan); err != nil {
			t.Fatal(err)
		}
		w.subs = append(w.subs, name)
	}
}

// worldPlan is the demo's plan with 4 s store phases in a 20 s ack deadline
// (claim 4 s + work 7 s + complete 4 s + unknown mark 4 s, invariant 5). Under
// the race detector on two cores, SQLite claims from several worker processes
// sharing one file can wait on the file's lock past the demo's 2 s claim
// budget; each such wait answers store-unavailable (503), a nack that spends a
// delivery attempt the sizing model budgets for crashed holders, and a storm
// with many kills then dead-lettered healthy orders.
func worldPlan() sizing.Plan {
	p := demo.Plan()
	p.StoreTimeout, p.AckDeadline, p.MaxDeliveryAttempts = 4*time.Second, 20*time.Second, 0
	return p.WithDefaults()
}

func (o worldOptions) withDefaults() worldOptions {
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.Plan == (sizing.Plan{}) {
		o.Plan = worldPlan()
	}
	o.Plan = o.Plan.WithDefaults()
	if o.Subscriptions <= 0 {
		o.Subscriptions = 1
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	if o.PubSub == "" {
		o.PubSub = pubsubFake
	}
	return o
}

// createSubscription adds a push subscription to the topic with the same
// settings localpubsub.Create gives the first.
func (w *world) createSubscription(name string, plan sizing.Plan) error {
	p := plan.WithDefaults()
	_, err := w.ps.Client.SubscriptionAdminClient.CreateSubscription(w.ctx, &pubsubpb.Subscription{
		Name: name, Topic: w.topo.Topic, AckDeadlineSeconds: int32(p.AckDeadline.Seconds()),
		RetryPolicy:      &pubsubpb.RetryPolicy{MinimumBackoff: durationpb.New(p.MinBackoff), MaximumBackoff: durationpb.New(p.MaxBackoff)},
		DeadLetterPolicy: &pubsubpb.DeadLetterPolicy{DeadLetterTopic: w.topo.DeadLetterTopic, MaxDeliveryAttempts: int32(p.MaxDeliveryAttempts)},
	})
	return err
}

func (w *world) startBridges(concurrency int) {
	bctx, stop := context.WithCancel(context.WithoutCancel(w.ctx))
	w.brStop = stop
	for _, sub := range w.subs {
		br, err := pushbridge.New(w.ctx, w.ps.Client.SubscriptionAdminClient, pushbridge.Options{
			Subscription: sub, Endpoint: w.feSrv.URL, Concurrency: concurrency,
			Logger:     discardLogger,
			OnDelivery: func(d pushbridge.Delivery) { w.observe(sub, d) },
		})
		if err != nil {
			w.t.Fatal(err)
		}
		w.bridges = append(w.bridges, br)
		w.brDone.Go(func() { _ = br.Run(bctx) })
	}
}

func (w *world) observe(sub string, d pushbridge.Delivery) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deliveries[d.MessageID] = append(w.deliveries[d.MessageID], d)
	if d.Acked {
		if w.acked[sub] == nil {
			w.acked[sub] = map[string]int{}
		}
		w.acked[sub][d.MessageID] = d.Attempt
	}
}

// observePush records a push the emulator made, numbering its attempts, as
// the bridge's OnDelivery does for the fake.
func (w *world) observePush(p pushInfo, status int) {
	sub := p.Subscription
	if sub == "" {
		sub = w.topo.Subscription
	}
	w.mu.Lock()
	if w.pushCount[sub] == nil {
		w.pushCount[sub] = map[string]int{}
	}
	w.pushCount[sub][p.MessageID]++
	n := w.pushCount[sub][p.MessageID]
	w.mu.Unlock()
	w.observe(sub, pushbridge.Delivery{MessageID: p.MessageID, Attempt: n, Status: status, Acked: emulatorAcks(status)})
}

// close stops the bridges, waits for detached pushes, stops the workers
// (SIGTERM) and closes the servers.
func (w *world) close() {
	if w.brStop != nil {
		w.brStop()
		w.brDone.Wait()
	}
	if w.pushing {
		w.stopPush()
	}
	if w.fe != nil {
		w.fe.bg.Wait()
	}
	w.restarts.Wait()
	w.checkWorkers()
	var wg sync.WaitGroup
	for _, p := range w.procs {
		if p != nil {
			wg.Go(p.Stop)
		}
	}
	wg.Wait()
	w.cancel()
	if w.feSrv != nil {
		w.feSrv.Close()
	}
	w.supSrv.Close()
	switch {
	case w.ps == nil:
	case w.ps.Server == nil: // the emulator: it outlives the world
		_ = w.ps.Client.Close()
	default:
		_ = w.ps.Close()
	}
}

// publish publishes an order with the attributes order_id (and entity when
// set) and returns its message id.
func (w *world) publish(o supplier.Order) string {
	w.t.Helper()
	data, err := json.Marshal(o)
	if err != nil {
		w.t.Fatal(err)
	}
	w.mu.Lock()
	seq := strconv.Itoa(len(w.published))
	w.published = append(w.published, "")
	w.mu.Unlock()
	attrs := map[string]string{"order_id": o.Order, attrPublished: seq}
	if o.Entity != "" {
		attrs["entity"] = o.Entity
	}
	id, err := w.ps.Publish(w.ctx, w.topo.Topic, data, attrs)
	if err != nil {
		w.t.Fatal(err)
	}
	w.mu.Lock()
	w.published[len(w.published)-1] = id
	w.bySeq[seq] = id
	w.mu.Unlock()
	return id
}

// attrPublished numbers the suite's messages in the order published. A dead
// letter is a new message on the dead-letter topic: the emulator gives it a
// new message id (pstest keeps the source's), so the suite finds the source
// by this attribute, which Pub/Sub copies.
const attrPublished = "e2e_seq"

// settled reports how many published messages are acked on every
// subscription or dead-lettered.
func (w *world) settled() (done, total int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range w.published {
		ok := w.deadLetters[id] != nil
		if !ok {
			ok = true
			for _, sub := range w.subs {
				if _, acked := w.acked[sub][id]; !acked {
					ok = false
				}
			}
		}
		if ok {
			done++
		}
	}
	return done, len(w.published)
}

// drainDeadLetters moves what is on the dead-letter subscription into
// w.deadLetters.
func (w *world) drainDeadLetters() {
	ms, err := w.ps.DrainDeadLetters(w.ctx, w.topo)
	// An empty pull may end with the server's DeadlineExceeded just before
	// the client's own deadline fires: nothing was pulled.
	if err != nil && status.Code(err) != codes.DeadlineExceeded {
		w.t.Logf("drain dead letters: %v", err)
	}
	w.mu.Lock()
	for _, m := range ms {
		id, ok := w.bySeq[m.GetAttributes()[attrPublished]]
		if !ok {
			w.t.Errorf("a dead letter %s names no message this world published (attributes %v)", m.GetMessageId(), m.GetAttributes())
			continue
		}
		w.deadLetters[id] = m
	}
	w.mu.Unlock()
}

// waitSettled waits until every published message is acked on every
// subscription or dead-lettered, logging progress every 10 s; it fails the
// test after timeout.
func (w *world) waitSettled(timeout time.Duration) {
	w.t.Helper()
	start := time.Now()
	lastLog := start
	for {
		w.drainDeadLetters()
		done, total := w.settled()
		if done == total {
			w.drainDeadLetters() // a straggler dead-lettered while acks finished
			return
		}
		if time.Since(start) > timeout {
			w.t.Fatalf("%s: after %s only %d of %d messages are acked or dead-lettered", w.backend, timeout, done, total)
		}
		if time.Since(lastLog) > 10*time.Second {
			lastLog = time.Now()
			w.t.Logf("%s: %5.1fs  %d/%d settled  supplier orders %d", w.backend, time.Since(start).Seconds(), done, total, w.rec.sup.Report().Orders)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// deliveriesOf returns the bridge deliveries of one message, every
// subscription.
func (w *world) deliveriesOf(id string) []pushbridge.Delivery {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]pushbridge.Delivery(nil), w.deliveries[id]...)
}

// mostDeliveries returns the most deliveries one message had.
func (w *world) mostDeliveries() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	most := 0
	for _, ds := range w.deliveries {
		most = max(most, len(ds))
	}
	return most
}

// ackedAttempt returns the attempt that acked id on subscription sub, 0 if none.
func (w *world) ackedAttempt(sub, id string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.acked[sub][id]
}

// deadLettered reports whether id is on the dead-letter subscription.
func (w *world) deadLettered(id string) *pubsubpb.PubsubMessage {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.deadLetters[id]
}
