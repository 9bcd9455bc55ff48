package pull_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/pull"
)

// logBuf collects log lines safely.
type logBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// rig is a pstest server with one topic and one pull subscription, and a gate
// over a memgate store.
type rig struct {
	srv    *pstest.Server
	client *pubsub.Client
	topic  string
	sub    string
	store  *memgate.Store
	logs   *logBuf
	log    *slog.Logger
}

const project = "test"

func newRig(t *testing.T, exactlyOnce bool, opts ...pstest.ServerReactorOption) *rig {
	t.Helper()
	ctx := context.Background()
	srv := pstest.NewServer(opts...)
	t.Cleanup(func() { _ = srv.Close() })
	conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	c, err := pubsub.NewClient(ctx, project, option.WithGRPCConn(conn))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	r := &rig{srv: srv, client: c, topic: "projects/test/topics/orders", sub: "projects/test/subscriptions/orders-pull",
		store: memgate.New(nil), logs: &logBuf{}}
	r.log = slog.New(slog.NewJSONHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if _, err := c.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: r.topic}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
		Name: r.sub, Topic: r.topic, AckDeadlineSeconds: 60, EnableExactlyOnceDelivery: exactlyOnce,
	}); err != nil {
		t.Fatal(err)
	}
	return r
}

// gate returns a gate over b (the rig's store when nil) in namespace "ns".
func (r *rig) gate(t *testing.T, b gate.Backend) *gate.Gate {
	t.Helper()
	if b == nil {
		b = r.store
	}
	g, err := gate.New(b, &gate.Options{Namespace: "ns", Lease: time.Minute, Logger: r.log})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func (r *rig) publish(data string, attrs map[string]string) string {
	return r.srv.Publish(r.topic, []byte(data), attrs)
}

// receive runs rc.Receive on the subscription until the returned stop is
// called; stop cancels the context and returns Receive's error, or an error
// when Receive does not return within a minute.
func (r *rig) receive(t *testing.T, rc *pull.Receiver) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	sub := r.client.Subscriber(r.sub)
	go func() { done <- rc.Receive(ctx, sub) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				err = errors.New("Receive did not return within a minute of its context ending")
			}
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// settled waits until message id was acked (true) or nacked (false): an ack
// request, or a modack to deadline 0.
func (r *rig) settled(t *testing.T, id string) bool {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := r.srv.Message(id); m != nil {
			if m.Acks > 0 {
				return true
			}
			for _, ma := range m.Modacks {
				if ma.AckDeadline == 0 {
					return false
				}
			}
		}
		time.Sleep(5 * time.Millisecond) // polling the fake's state; no clock to inject
	}
	t.Fatalf("message %s was neither acked nor nacked within 30s", id)
	return false
}

// acks returns the message's ack count and nack count so far.
func (r *rig) acks(id string) (acks, nacks int) {
	m := r.srv.Message(id)
	if m == nil {
		return 0, 0
	}
	for _, ma := range m.Modacks {
		if ma.AckDeadline == 0 {
			nacks++
		}
	}
	return m.Acks, nacks
}

// down is a backend whose claims fail: the store is unreachable.
type down struct{ gate.Backend }

func (down) Claim(context.Context, gate.ClaimRequest) (gate.ClaimResult, error) {
	return gate.ClaimResult{}, errors.New("dial tcp 127.0.0.1:1: connection refused")
}

// lostComplete is a backend whose completions fail after the body ran.
type lostComplete struct{ *memgate.Store }

func (lostComplete) Complete(context.Context, gate.Completion) (bool, error) {
	return false, errors.New("i/o timeout")
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
