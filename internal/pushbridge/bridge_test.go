package pushbridge_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/oncegate/oncegate/internal/pushbridge"
)

func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		attempt int
		want    time.Duration
	}{{1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {7, 10 * time.Second}} {
		if got := pushbridge.Backoff(time.Second, 10*time.Second, tc.attempt); got != tc.want {
			t.Errorf("Backoff(attempt %d) = %v, want %v", tc.attempt, got, tc.want)
		}
	}
}

type fixture struct {
	client *pubsub.Client
	topic  string
	sub    string
	dlq    string
}

func newFixture(t *testing.T, maxAttempts int32) *fixture {
	t.Helper()
	ctx := context.Background()
	srv := pstest.NewServer()
	t.Cleanup(func() { _ = srv.Close() })
	conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	c, err := pubsub.NewClient(ctx, "p", option.WithGRPCConn(conn))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	f := &fixture{client: c, topic: "projects/p/topics/orders", sub: "projects/p/subscriptions/orders-push", dlq: "projects/p/topics/orders-dlq"}
	for _, topic := range []string{f.topic, f.dlq} {
		if _, err := c.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
		Name: "projects/p/subscriptions/dlq-pull", Topic: f.dlq,
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
		Name: f.sub, Topic: f.topic, AckDeadlineSeconds: 10,
		RetryPolicy:      &pubsubpb.RetryPolicy{MinimumBackoff: durationpb.New(time.Second), MaximumBackoff: durationpb.New(time.Second)},
		DeadLetterPolicy: &pubsubpb.DeadLetterPolicy{DeadLetterTopic: f.dlq, MaxDeliveryAttempts: maxAttempts},
	}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) publish(t *testing.T, data string) string {
	t.Helper()
	r, err := f.client.TopicAdminClient.Publish(context.Background(), &pubsubpb.PublishRequest{
		Topic: f.topic, Messages: []*pubsubpb.PubsubMessage{{Data: []byte(data), Attributes: map[string]string{"k": "v"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r.MessageIds[0]
}

type pushed struct {
	Message struct {
		Data      []byte `json:"data"`
		MessageID string `json:"messageId"`
	} `json:"message"`
	DeliveryAttempt int `json:"deliveryAttempt"`
}

func TestNackRedeliversAfterBackoffThenAcks(t *testing.T) {
	f := newFixture(t, 5)
	var mu sync.Mutex
	var got []pushed
	var times []time.Time
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p pushed
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &p); err != nil {
			t.Errorf("push body: %v", err)
		}
		mu.Lock()
		got, times = append(got, p), append(times, time.Now())
		n := len(got)
		mu.Unlock()
		if n < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer endpoint.Close()
	id := f.publish(t, "order-1")
	ctx, cancel := context.WithCancel(context.Background())
	b, err := pushbridge.New(ctx, f.client.SubscriptionAdminClient, pushbridge.Options{
		Subscription: f.sub, Endpoint: endpoint.URL, Concurrency: 2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnDelivery: func(d pushbridge.Delivery) {
			if d.Acked {
				cancel()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(30 * time.Second); cancel() }()
	_ = b.Run(ctx)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 {
		t.Fatalf("deliveries = %d, want 3", len(got))
	}
	for i, p := range got {
		if p.Message.MessageID != id || string(p.Message.Data) != "order-1" || p.DeliveryAttempt != i+1 {
			t.Fatalf("delivery %d = %+v, want message %s attempt %d", i, p, id, i+1)
		}
		if i > 0 && times[i].Sub(times[i-1]) < 900*time.Millisecond {
			t.Fatalf("redelivery %d came after %v, want the 1s minimum backoff", i, times[i].Sub(times[i-1]))
		}
	}
	if s := b.Stats(); s.Acks != 1 || s.Nacks != 2 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestPoisonIsDeadLettered(t *testing.T) {
	f := newFixture(t, 5)
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
	}))
	defer endpoint.Close()
	f.publish(t, "poison")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := pushbridge.New(ctx, f.client.SubscriptionAdminClient, pushbridge.Options{
		Subscription: f.sub, Endpoint: endpoint.URL, Concurrency: 1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = b.Run(ctx) }()
	for ctx.Err() == nil {
		r, err := f.client.SubscriptionAdminClient.Pull(ctx, &pubsubpb.PullRequest{Subscription: "projects/p/subscriptions/dlq-pull", MaxMessages: 1})
		if err == nil && len(r.ReceivedMessages) == 1 {
			if string(r.ReceivedMessages[0].Message.Data) != "poison" {
				t.Fatalf("dead letter = %q", r.ReceivedMessages[0].Message.Data)
			}
			if n := b.Stats().Deliveries; n != 5 {
				t.Fatalf("deliveries before dead-lettering = %d, want 5 (max delivery attempts)", n)
			}
			return
		}
	}
	t.Fatal("poison message never reached the dead-letter topic")
}
