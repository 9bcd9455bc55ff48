// Package localpubsub runs Google's in-process Pub/Sub fake (pstest) with the
// topology the components deploy: a topic, a push-style subscription with a
// retry policy and a dead-letter policy sized from a plan, the dead-letter topic
// and a pull subscription on it. The demo, the CLI and the end-to-end tests use
// it; pushbridge turns the subscription into push requests.
package localpubsub

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/oncegate/oncegate/sizing"
)

// Fake is a running pstest server and a client connected to it.
type Fake struct {
	Server  *pstest.Server
	Client  *pubsub.Client
	Project string
}

// Start starts pstest on a free loopback port and connects a client.
func Start(ctx context.Context, project string) (*Fake, error) {
	srv := pstest.NewServer()
	conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		_ = srv.Close()
		return nil, fmt.Errorf("localpubsub: dial pstest: %w", err)
	}
	c, err := pubsub.NewClient(ctx, project, option.WithGRPCConn(conn))
	if err != nil {
		_ = srv.Close()
		return nil, fmt.Errorf("localpubsub: client: %w", err)
	}
	return &Fake{Server: srv, Client: c, Project: project}, nil
}

// Connect connects to a Pub/Sub server at host (the emulator's
// PUBSUB_EMULATOR_HOST) and checks within dialTimeout that it answers; the
// error says so when it does not. The returned Fake has no Server.
func Connect(ctx context.Context, host, project string, dialTimeout time.Duration) (*Fake, error) {
	conn, err := grpc.NewClient(host, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("localpubsub: dial %s: %w", host, err)
	}
	c, err := pubsub.NewClient(ctx, project, option.WithGRPCConn(conn))
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("localpubsub: client: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	it := c.TopicAdminClient.ListTopics(pctx, &pubsubpb.ListTopicsRequest{Project: "projects/" + project, PageSize: 1})
	if _, err := it.Next(); err != nil && !errors.Is(err, iterator.Done) {
		_ = c.Close()
		if pctx.Err() != nil || status.Code(err) == codes.Unavailable || status.Code(err) == codes.DeadlineExceeded {
			return nil, fmt.Errorf("localpubsub: the Pub/Sub emulator at %s does not answer within %s (start it with: gcloud beta emulators pubsub start --host-port=%s): %w",
				host, dialTimeout, host, ErrNoAnswer)
		}
		return nil, fmt.Errorf("localpubsub: list topics at %s: %w", host, err)
	}
	return &Fake{Client: c, Project: project}, nil
}

// ErrNoAnswer is wrapped by Connect's error when the server does not answer.
var ErrNoAnswer = errors.New("no answer")

// Close stops the client and the server (when this Fake started one).
func (f *Fake) Close() error {
	err := f.Client.Close()
	if f.Server != nil {
		return f.Server.Close()
	}
	return err
}

// Topology names one consumer's resources (full resource names).
type Topology struct {
	Topic, Subscription, DeadLetterTopic, DeadLetterSubscription string
}

// Names returns the topology for a base name in f's project.
func (f *Fake) Names(base string) Topology {
	p := "projects/" + f.Project
	return Topology{
		Topic: p + "/topics/" + base, Subscription: p + "/subscriptions/" + base + "-push",
		DeadLetterTopic: p + "/topics/" + base + "-dlq", DeadLetterSubscription: p + "/subscriptions/" + base + "-dlq",
	}
}

// Create creates the topology: the subscription gets the plan's ack deadline,
// retry policy and max delivery attempts (plan with defaults applied).
func (f *Fake) Create(ctx context.Context, t Topology, plan sizing.Plan) error {
	return f.CreateWith(ctx, t, plan, CreateOptions{})
}

// CreateOptions vary CreateWith.
type CreateOptions struct {
	// PushEndpoint, when set, makes the subscription a push subscription to it.
	PushEndpoint string
	// NoRetryPolicy leaves the retry policy out: the Pub/Sub emulator's retry
	// policy can stall a subscription when nacks meet (tests/doc.go), and
	// without one it redelivers a refused push after about 1 s.
	NoRetryPolicy bool
}

// CreateWith creates the topology as Create does, varied by o.
func (f *Fake) CreateWith(ctx context.Context, t Topology, plan sizing.Plan, o CreateOptions) error {
	p := plan.WithDefaults()
	for _, topic := range []string{t.Topic, t.DeadLetterTopic} {
		if _, err := f.Client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
			return fmt.Errorf("localpubsub: create topic %s: %w", topic, err)
		}
	}
	subs := []*pubsubpb.Subscription{
		{Name: t.DeadLetterSubscription, Topic: t.DeadLetterTopic, AckDeadlineSeconds: 60},
		{
			Name: t.Subscription, Topic: t.Topic, AckDeadlineSeconds: int32(p.AckDeadline.Seconds()),
			RetryPolicy:      &pubsubpb.RetryPolicy{MinimumBackoff: durationpb.New(p.MinBackoff), MaximumBackoff: durationpb.New(p.MaxBackoff)},
			DeadLetterPolicy: &pubsubpb.DeadLetterPolicy{DeadLetterTopic: t.DeadLetterTopic, MaxDeliveryAttempts: int32(p.MaxDeliveryAttempts)},
		},
	}
	if o.PushEndpoint != "" {
		subs[1].PushConfig = &pubsubpb.PushConfig{PushEndpoint: o.PushEndpoint}
	}
	if o.NoRetryPolicy {
		subs[1].RetryPolicy = nil
	}
	for _, s := range subs {
		if _, err := f.Client.SubscriptionAdminClient.CreateSubscription(ctx, s); err != nil {
			return fmt.Errorf("localpubsub: create subscription %s: %w", s.Name, err)
		}
	}
	return nil
}

// Publish publishes one message and returns its id.
func (f *Fake) Publish(ctx context.Context, topic string, data []byte, attrs map[string]string) (string, error) {
	r, err := f.Client.TopicAdminClient.Publish(ctx, &pubsubpb.PublishRequest{
		Topic: topic, Messages: []*pubsubpb.PubsubMessage{{Data: data, Attributes: attrs}},
	})
	if err != nil {
		return "", fmt.Errorf("localpubsub: publish: %w", err)
	}
	return r.MessageIds[0], nil
}

// DrainDeadLetters pulls and acks what is on the dead-letter subscription and
// returns the messages. An empty subscription returns nothing after at most
// 600ms (pstest holds an empty pull for 500ms).
func (f *Fake) DrainDeadLetters(ctx context.Context, t Topology) ([]*pubsubpb.PubsubMessage, error) {
	pctx, cancel := context.WithTimeout(ctx, 600*time.Millisecond)
	defer cancel()
	r, err := f.Client.SubscriptionAdminClient.Pull(pctx, &pubsubpb.PullRequest{Subscription: t.DeadLetterSubscription, MaxMessages: 100})
	if err != nil {
		// An empty pull ends at our deadline, or at the server's an instant earlier.
		if ctx.Err() == nil && (pctx.Err() != nil || status.Code(err) == codes.DeadlineExceeded) {
			return nil, nil
		}
		return nil, err
	}
	var out []*pubsubpb.PubsubMessage
	var ids []string
	for _, m := range r.ReceivedMessages {
		out = append(out, m.Message)
		ids = append(ids, m.AckId)
	}
	if len(ids) > 0 {
		if err := f.Client.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: t.DeadLetterSubscription, AckIds: ids}); err != nil {
			return out, err
		}
	}
	return out, nil
}
