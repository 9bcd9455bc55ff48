package e2e_test

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/oncegate/oncegate/internal/localpubsub"
	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/sizing"
)

// Which Pub/Sub a world runs on (worldOptions.PubSub).
const (
	// pubsubFake is Google's in-process fake (pstest) with the project's push
	// bridge pulling from it and posting push requests.
	pubsubFake = "pstest"
	// pubsubEmulator is Google's Pub/Sub emulator (the Java process) pushing
	// to the front end itself: its own push loops, retry policy and
	// dead-letter policy, no project code in between.
	pubsubEmulator = "emulator"
)

// emulatorProject is the project the worlds on the emulator create their
// resources in; every world names them uniquely (testenv.UniqueName), since
// one emulator serves the whole test binary.
const emulatorProject = "oncegate-e2e"

// attrDeadLetterCount is the attribute Pub/Sub adds to a dead-lettered
// message: how many deliveries it had on its source subscription
// (https://cloud.google.com/pubsub/docs/handling-failures, "Track delivery
// attempts").
const attrDeadLetterCount = "CloudPubSubDeadLetterSourceDeliveryCount"

// emulatorAcks reports whether the emulator (0.8.20) acks a push answered with
// status: it acks 102, 200, 201, 203 and 204 (HttpEndpointPusher), where
// Google documents 102, 200, 201, 202 and 204 for push subscriptions
// (https://cloud.google.com/pubsub/docs/push, "Receive messages"). The workers
// never answer 202 or 203, so the two sets agree on every answer here.
func emulatorAcks(status int) bool {
	switch status {
	case 102, 200, 201, 203, 204:
		return true
	}
	return false
}

// dialEmulator connects a client to the shared Pub/Sub emulator, through
// plain gRPC as PUBSUB_EMULATOR_HOST would. The returned value has no Server:
// close it with Client.Close.
func dialEmulator(ctx context.Context, addr string) (*localpubsub.Fake, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("dial the Pub/Sub emulator at %s: %w", addr, err)
	}
	c, err := pubsub.NewClient(ctx, emulatorProject, option.WithGRPCConn(conn))
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("pubsub client on the emulator at %s: %w", addr, err)
	}
	return &localpubsub.Fake{Client: c, Project: emulatorProject}, nil
}

// pushSubscription is the push subscription components.NewConsumer deploys
// for plan (components/subscription.go: ackDeadlineSeconds is the plan's ack
// deadline in whole seconds, the retry policy its minimum and maximum backoff,
// the dead-letter policy its dead-letter topic and max delivery attempts, the
// push endpoint the service's URL), minus the OIDC token, which the emulator
// neither signs nor sends. withRetry false leaves the retry policy out (see
// tests/doc.go: the emulator's retry policy can stall a busy subscription).
func pushSubscription(plan sizing.Plan, attempts int, t localpubsub.Topology, endpoint string, withRetry bool) *pubsubpb.Subscription {
	p := plan.WithDefaults()
	s := &pubsubpb.Subscription{
		Name: t.Subscription, Topic: t.Topic,
		AckDeadlineSeconds: int32(p.AckDeadline / time.Second),
		DeadLetterPolicy:   &pubsubpb.DeadLetterPolicy{DeadLetterTopic: t.DeadLetterTopic, MaxDeliveryAttempts: int32(attempts)},
		PushConfig:         &pubsubpb.PushConfig{PushEndpoint: endpoint},
	}
	if withRetry {
		s.RetryPolicy = &pubsubpb.RetryPolicy{MinimumBackoff: durationpb.New(p.MinBackoff), MaximumBackoff: durationpb.New(p.MaxBackoff)}
	}
	return s
}

// startEmulatorWorld connects w to the emulator and creates the topics and
// the dead-letter subscription (a pull subscription, as the components
// deploy it); the push subscription comes in startPush, once the front end
// answers.
func (w *world) startEmulatorWorld() {
	t := w.t
	addr := testenv.PubSubEmulator(t)
	var err error
	if w.ps, err = dialEmulator(w.ctx, addr); err != nil {
		t.Fatal(err)
	}
	w.topo = w.ps.Names(testenv.UniqueName(t, "orders"))
	if err := createTopics(w.ctx, w.ps, w.topo); err != nil {
		t.Fatal(err)
	}
	w.subs = []string{w.topo.Subscription}
}

// createTopics creates t's topic, its dead-letter topic and the dead-letter
// topic's pull subscription on the emulator.
func createTopics(ctx context.Context, ps *localpubsub.Fake, t localpubsub.Topology) error {
	for _, topic := range []string{t.Topic, t.DeadLetterTopic} {
		if _, err := ps.Client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
			return fmt.Errorf("emulator: create topic %s: %w", topic, err)
		}
	}
	if _, err := ps.Client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
		Name: t.DeadLetterSubscription, Topic: t.DeadLetterTopic, AckDeadlineSeconds: 60,
	}); err != nil {
		return fmt.Errorf("emulator: create the dead-letter subscription: %w", err)
	}
	return nil
}

// startPush creates the push subscription pointing at the front end: from
// here on the emulator pushes.
func (w *world) startPush(o worldOptions) {
	attempts := o.Plan.MaxDeliveryAttempts
	if o.SubscriptionAttempts > 0 {
		attempts = o.SubscriptionAttempts
	}
	sub := pushSubscription(o.Plan, attempts, w.topo, w.feSrv.URL+"/", !o.NoRetryPolicy)
	if _, err := w.ps.Client.SubscriptionAdminClient.CreateSubscription(w.ctx, sub); err != nil {
		w.t.Fatalf("emulator: create the push subscription: %v", err)
	}
	w.pushing = true
}

// stopPush deletes the push subscription, which stops the emulator's push
// loops for it, and the world's topics.
func (w *world) stopPush() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), 10*time.Second)
	defer cancel()
	admin := w.ps.Client.SubscriptionAdminClient
	for _, s := range []string{w.topo.Subscription, w.topo.DeadLetterSubscription} {
		if err := admin.DeleteSubscription(ctx, &pubsubpb.DeleteSubscriptionRequest{Subscription: s}); err != nil {
			w.t.Logf("emulator: delete %s: %v", s, err)
		}
	}
	for _, topic := range []string{w.topo.Topic, w.topo.DeadLetterTopic} {
		_ = w.ps.Client.TopicAdminClient.DeleteTopic(ctx, &pubsubpb.DeleteTopicRequest{Topic: topic})
	}
}
