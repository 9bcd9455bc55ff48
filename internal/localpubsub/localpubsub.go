// Package localpubsub runs Google's in-process Pub/Sub fake (pstest) with the
// topology the components deploy: a topic, a push-style subscription with a
// retry policy and a dead-letter policy sized from a plan, the dead-letter topic
// and a pull subscription on it. The demo, the CLI and the end-to-end tests use
// it; pushbridge turns the subscription into push requests.
package localpubsub

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
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

// Close stops the client and the server.
func (f *Fake) Close() error {
	_ = f.Client.Close()
	return f.Server.Close()
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
