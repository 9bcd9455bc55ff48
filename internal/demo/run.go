package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/felixge/httpsnoop"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/oncegate/oncegate/internal/crashwindow"
	"github.com/oncegate/oncegate/internal/emulator"
	"github.com/oncegate/oncegate/internal/localpubsub"
	"github.com/oncegate/oncegate/internal/pushbridge"
	"github.com/oncegate/oncegate/internal/supplier"
	"github.com/oncegate/oncegate/internal/workerproc"
	"github.com/oncegate/oncegate/sizing"
)

// run is one demo run's moving parts.
type run struct {
	o        Options
	plan     sizing.Plan
	pullPlan sizing.PullPlan // the workers' plan when o.Pull
	store    store
	log      *slog.Logger

	ps       *localpubsub.Fake
	topo     localpubsub.Topology
	supplier *supplier.Supplier
	supSrv   *httptest.Server
	workers  []*workerproc.Proc
	lb       *httptest.Server
	bridge   *pushbridge.Bridge
	stopBr   context.CancelFunc
	brDone   chan struct{}

	outcomes sync.Map           // outcome → *atomic.Int64, from the workers' log lines
	acked    sync.Map           // message id → true
	emu      *emulator.Emulator // the Pub/Sub emulator this run started
	emuDir   string
	psHost   string       // the emulator's host:port
	pushes   atomic.Int64 // push requests through the balancer
	attempts sync.Map     // message id → *atomic.Int64: its pushes through the balancer
	injected atomic.Int64
	// published is set once the first order is about to be published: from
	// then on the workers may write records, so a failed run keeps the store.
	published atomic.Bool
	inflight  sync.WaitGroup
	next      atomic.Uint64
	onAck     func(id string)

	mu    sync.Mutex
	lines []crashwindow.Line // the workers' delivery lines
	kills []crashwindow.Kill
}

// lineSink returns the workerproc line callback of worker i: it counts
// outcomes and keeps each delivery line for the accounting.
func (r *run) lineSink(i int) func(map[string]any) {
	return func(line map[string]any) {
		o, ok := line["outcome"].(string)
		if !ok {
			return
		}
		c, _ := r.outcomes.LoadOrStore(o, new(atomic.Int64))
		c.(*atomic.Int64).Add(1)
		l := crashwindow.Line{Worker: i, Outcome: o}
		l.Key, _ = line["key"].(string)
		if s, ok := line["time"].(string); ok {
			l.Time, _ = time.Parse(time.RFC3339Nano, s)
		}
		r.mu.Lock()
		r.lines = append(r.lines, l)
		r.mu.Unlock()
		if r.o.Pull {
			r.pulled(line)
		}
	}
}

// pulled counts a pull worker's delivery line as the balancer counts a push:
// one delivery of its message, and the ack when the line says it acked (the
// worker logs the line just before it acks).
func (r *run) pulled(line map[string]any) {
	id, _ := line["message_id"].(string)
	if id == "" {
		return
	}
	r.pushes.Add(1)
	c, _ := r.attempts.LoadOrStore(id, new(atomic.Int64))
	c.(*atomic.Int64).Add(1)
	if ack, _ := line["ack"].(bool); ack {
		if _, dup := r.acked.LoadOrStore(id, true); !dup && r.onAck != nil {
			r.onAck(id)
		}
	}
}

// history returns the workers' lines and the kills so far.
func (r *run) history() ([]crashwindow.Line, []crashwindow.Kill) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]crashwindow.Line(nil), r.lines...), append([]crashwindow.Kill(nil), r.kills...)
}

// attempt returns the highest delivery attempt the bridge made of a message.
func (r *run) attempt(id string) int64 {
	if c, ok := r.attempts.Load(id); ok {
		return c.(*atomic.Int64).Load()
	}
	return 0
}

func (r *run) outcome(name string) int64 {
	if c, ok := r.outcomes.Load(name); ok {
		return c.(*atomic.Int64).Load()
	}
	return 0
}

func (r *run) setUp(ctx context.Context, backendEnv []string) error {
	r.supplier = supplier.NewIdempotent()
	r.supSrv = httptest.NewServer(r.supplier)
	env := append([]string{"ONCEGATE_NAMESPACE=" + r.o.Namespace, "ONCEGATE_KEY_ATTRIBUTE=order_id",
		"GOOGLE_CLOUD_PROJECT=oncegate-demo", "ONCEGATE_OIDC_DISABLED=1"}, backendEnv...)
	if r.o.Pull {
		return r.setUpPull(ctx, env)
	}
	for k, v := range r.plan.Env() {
		env = append(env, k+"="+v)
	}
	env = append(env, r.o.WorkerEnv...)
	if err := r.startWorkers(ctx, env); err != nil {
		return err
	}
	r.lb = httptest.NewServer(r.balancer())
	if r.o.PubSub == PubSubEmulator {
		return r.setUpEmulator(ctx)
	}
	var err error
	if r.ps, err = localpubsub.Start(ctx, "oncegate-demo"); err != nil {
		return err
	}
	r.topo = r.ps.Names("orders")
	if err := r.ps.Create(ctx, r.topo, r.plan); err != nil {
		return err
	}
	r.bridge, err = pushbridge.New(ctx, r.ps.Client.SubscriptionAdminClient, pushbridge.Options{
		Subscription: r.topo.Subscription, Endpoint: r.lb.URL, Concurrency: 8, Logger: r.log,
	})
	if err != nil {
		return err
	}
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.stopBr, r.brDone = cancel, make(chan struct{})
	go func() { _ = r.bridge.Run(bctx); close(r.brDone) }()
	return nil
}

// startWorkers starts the worker processes with env plus each one's supplier
// URL.
func (r *run) startWorkers(ctx context.Context, env []string) error {
	for i := range r.o.Workers {
		// Each worker's supplier URL names it, so every call is traced to a worker.
		wenv := append([]string{"SUPPLIER_URL=" + r.supSrv.URL + "/w/" + strconv.Itoa(i)}, env...)
		p, err := workerproc.Start(ctx, r.o.WorkerCommand, wenv, r.lineSink(i))
		if err != nil {
			return fmt.Errorf("demo: worker %d: %w", i+1, err)
		}
		r.workers = append(r.workers, p)
	}
	return nil
}

// setUpEmulator uses the Pub/Sub emulator's own push: the one at
// PUBSUB_EMULATOR_HOST, or one it starts. The push subscription has the plan's
// ack deadline and dead-letter policy but no retry policy: the emulator's can
// stall a subscription when nacks meet (tests/doc.go), and without one it
// redelivers a refused push after about 1 s, the plan's backoff.
func (r *run) setUpEmulator(ctx context.Context) error {
	if err := r.connectEmulator(ctx); err != nil {
		return err
	}
	return r.ps.CreateWith(ctx, r.topo, r.plan, localpubsub.CreateOptions{PushEndpoint: r.lb.URL, NoRetryPolicy: true})
}

// connectEmulator connects to the emulator at PUBSUB_EMULATOR_HOST, or starts
// one, and names this run's topology.
func (r *run) connectEmulator(ctx context.Context) error {
	host := r.o.Getenv("PUBSUB_EMULATOR_HOST")
	if host == "" {
		dir, err := os.MkdirTemp("", "oncegate-demo-emulator-")
		if err != nil {
			return err
		}
		r.emuDir = dir
		fmt.Fprintln(r.o.Out, "starting the Pub/Sub emulator (a Java process; a few seconds)…")
		if r.emu, err = emulator.StartPubSub(ctx, emulator.Options{Dir: dir}); err != nil {
			return fmt.Errorf("demo: --pubsub=emulator: %w", err)
		}
		host = r.emu.Host()
	}
	r.psHost = host
	var err error
	if r.ps, err = localpubsub.Connect(ctx, host, "oncegate-demo", 10*time.Second); err != nil {
		return fmt.Errorf("demo: --pubsub=emulator: %w", err)
	}
	// Names of this run only, so a long-lived emulator never mixes runs.
	r.topo = r.ps.Names(r.o.Namespace)
	return nil
}

// balancer spreads pushes over the workers round-robin, like Cloud Run's front
// end; a killed worker answers 502 (a nack). It counts each push of a message
// (the emulator's envelope has no deliveryAttempt) and records its ack.
func (r *run) balancer() http.Handler {
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			w := r.workers[r.next.Add(1)%uint64(len(r.workers))]
			u, _ := url.Parse(w.URL())
			pr.SetURL(u)
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) },
		ErrorLog:     slog.NewLogLogger(r.log.Handler(), slog.LevelDebug),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, "read body", http.StatusBadRequest)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		var env struct {
			Message struct {
				MessageID string `json:"messageId"`
			} `json:"message"`
		}
		_ = json.Unmarshal(body, &env)
		id := env.Message.MessageID
		r.pushes.Add(1)
		c, _ := r.attempts.LoadOrStore(id, new(atomic.Int64))
		c.(*atomic.Int64).Add(1)
		if m := httpsnoop.CaptureMetrics(proxy, w, req); pushbridge.Acks(m.Code) {
			if _, dup := r.acked.LoadOrStore(id, true); !dup && r.onAck != nil {
				r.onAck(id)
			}
		}
	})
}

func (r *run) tearDown() {
	if r.stopBr != nil {
		r.stopBr()
		<-r.brDone
	}
	r.inflight.Wait()
	for _, w := range r.workers {
		w.Stop()
	}
	for _, s := range []*httptest.Server{r.lb, r.supSrv} {
		if s != nil {
			s.Close()
		}
	}
	if r.ps != nil {
		_ = r.ps.Close()
	}
	if r.emu != nil {
		_ = r.emu.Stop()
	}
	if r.emuDir != "" {
		_ = os.RemoveAll(r.emuDir)
	}
}

// push posts a message's push envelope straight to one worker: a delivery
// Pub/Sub makes besides the bridge's (a transport redelivery or a concurrent
// one).
func (r *run) push(ctx context.Context, worker int, id string, o order) {
	r.inflight.Add(1)
	go func() {
		defer r.inflight.Done()
		body, _ := pushbridge.Envelope(&pubsubpb.PubsubMessage{
			Data: o.data(), Attributes: map[string]string{"order_id": o.body.Order}, MessageId: id,
			PublishTime: timestamppb.Now(),
		}, r.topo.Subscription, 1)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.workers[worker%len(r.workers)].URL(), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		r.injected.Add(1)
		if resp, err := (&http.Client{Timeout: r.plan.AckDeadline}).Do(req); err == nil {
			resp.Body.Close()
		}
	}()
}

// killOne kills a worker with SIGKILL while it holds orders and restarts it.
// The kill is recorded once the process is gone, so every call it cut started
// before the recorded time.
func (r *run) killOne(ctx context.Context) {
	i := len(r.workers) - 1
	w := r.workers[i]
	w.Kill()
	r.mu.Lock()
	r.kills = append(r.kills, crashwindow.Kill{Worker: i, At: time.Now()})
	r.mu.Unlock()
	fmt.Fprintf(r.o.Out, "  killed worker %d with SIGKILL; restarting it (orders it was calling the supplier for may repeat: the call→done window)\n", i+1)
	time.Sleep(500 * time.Millisecond)
	if err := w.Restart(ctx); err != nil {
		fmt.Fprintf(r.o.Out, "  restart failed: %v\n", err)
	}
}
