package demo

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/oncegate/oncegate/internal/localpubsub"
	"github.com/oncegate/oncegate/internal/pushbridge"
	"github.com/oncegate/oncegate/internal/supplier"
	"github.com/oncegate/oncegate/internal/workerproc"
	"github.com/oncegate/oncegate/sizing"
)

// run is one demo run's moving parts.
type run struct {
	o           Options
	plan        sizing.Plan
	backendName string
	log         *slog.Logger

	ps       *localpubsub.Fake
	topo     localpubsub.Topology
	supplier *supplier.Supplier
	supSrv   *httptest.Server
	workers  []*workerproc.Proc
	lb       *httptest.Server
	bridge   *pushbridge.Bridge
	stopBr   context.CancelFunc
	brDone   chan struct{}

	outcomes sync.Map // outcome → *atomic.Int64, from the workers' log lines
	acked    sync.Map // message id → true
	injected atomic.Int64
	kills    atomic.Int64
	inflight sync.WaitGroup
	next     atomic.Uint64
	onAck    func(id string)
}

func (r *run) countOutcome(line map[string]any) {
	o, ok := line["outcome"].(string)
	if !ok {
		return
	}
	c, _ := r.outcomes.LoadOrStore(o, new(atomic.Int64))
	c.(*atomic.Int64).Add(1)
}

func (r *run) outcome(name string) int64 {
	if c, ok := r.outcomes.Load(name); ok {
		return c.(*atomic.Int64).Load()
	}
	return 0
}

func (r *run) setUp(ctx context.Context, backendEnv []string) error {
	var err error
	if r.ps, err = localpubsub.Start(ctx, "oncegate-demo"); err != nil {
		return err
	}
	r.topo = r.ps.Names("orders")
	if err := r.ps.Create(ctx, r.topo, r.plan); err != nil {
		return err
	}
	r.supplier = supplier.New()
	r.supSrv = httptest.NewServer(r.supplier)
	env := append([]string{"SUPPLIER_URL=" + r.supSrv.URL, "ONCEGATE_NAMESPACE=demo", "ONCEGATE_KEY_ATTRIBUTE=order_id",
		"GOOGLE_CLOUD_PROJECT=oncegate-demo"}, backendEnv...)
	for k, v := range r.plan.Env() {
		env = append(env, k+"="+v)
	}
	env = append(env, r.o.WorkerEnv...)
	for i := range r.o.Workers {
		p, err := workerproc.Start(ctx, r.o.WorkerCommand, env, r.countOutcome)
		if err != nil {
			return fmt.Errorf("demo: worker %d: %w", i+1, err)
		}
		r.workers = append(r.workers, p)
	}
	r.lb = httptest.NewServer(r.balancer())
	r.bridge, err = pushbridge.New(ctx, r.ps.Client.SubscriptionAdminClient, pushbridge.Options{
		Subscription: r.topo.Subscription, Endpoint: r.lb.URL, Concurrency: 8, Logger: r.log,
		OnDelivery: func(d pushbridge.Delivery) {
			if d.Acked {
				r.acked.Store(d.MessageID, true)
				if r.onAck != nil {
					r.onAck(d.MessageID)
				}
			}
		},
	})
	if err != nil {
		return err
	}
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.stopBr, r.brDone = cancel, make(chan struct{})
	go func() { _ = r.bridge.Run(bctx); close(r.brDone) }()
	return nil
}

// balancer spreads pushes over the workers round-robin, like Cloud Run's front
// end; a killed worker answers 502 (a nack).
func (r *run) balancer() http.Handler {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			w := r.workers[r.next.Add(1)%uint64(len(r.workers))]
			u, _ := url.Parse(w.URL())
			pr.SetURL(u)
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) },
		ErrorLog:     slog.NewLogLogger(r.log.Handler(), slog.LevelDebug),
	}
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
func (r *run) killOne(ctx context.Context) {
	w := r.workers[len(r.workers)-1]
	w.Kill()
	r.kills.Add(1)
	fmt.Fprintf(r.o.Out, "  killed worker %d with SIGKILL; restarting it\n", len(r.workers))
	time.Sleep(500 * time.Millisecond)
	if err := w.Restart(ctx); err != nil {
		fmt.Fprintf(r.o.Out, "  restart failed: %v\n", err)
	}
}
