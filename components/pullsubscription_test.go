package components

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/sizing"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

const workersMember = "serviceAccount:orders-worker@" + testProject + ".iam.gserviceaccount.com"

// pullPlan is a pull plan around a renewed lease, a 10-connection pool and a
// bounded extension period.
var pullPlan = sizing.PullPlan{Plan: plan, BackendConnections: 10, MaxExtensionPeriod: time.Minute}

func newPull(args *PullSubscriptionArgs) (*mocks, error) {
	return run(func(ctx *pulumi.Context) error {
		_, err := NewPullSubscription(ctx, "orders", args)
		return err
	})
}

func pullArgs() *PullSubscriptionArgs {
	return &PullSubscriptionArgs{Project: pulumi.String(testProject), Topic: pulumi.String("orders-in"),
		Plan: pullPlan, SubscriberMember: pulumi.String(workersMember), ExactlyOnce: true}
}

// TestPullSubscription: the subscription carries the pull plan's numbers and
// exactly-once delivery, dead letters go to a never-expiring subscription, and
// the IAM is the workers' subscriber role plus the service agent's publisher
// and subscriber roles, nothing else.
func TestPullSubscription(t *testing.T) {
	m, err := newPull(pullArgs())
	if err != nil {
		t.Fatal(err)
	}
	r := pullPlan.WithDefaults()
	sub := m.one(t, "gcp:pubsub/subscription:Subscription", "orders-sub")
	wantStr(t, sub, "topic", "orders-in")
	if got := num(t, sub, "ackDeadlineSeconds"); got != int(r.AckDeadline/time.Second) {
		t.Errorf("ackDeadlineSeconds = %d, want the plan's %s", got, r.AckDeadline)
	}
	if got := num(t, sub, "deadLetterPolicy.maxDeliveryAttempts"); got != r.MaxDeliveryAttempts {
		t.Errorf("maxDeliveryAttempts = %d, want the plan's %d", got, r.MaxDeliveryAttempts)
	}
	wantStr(t, sub, "retryPolicy.minimumBackoff", "12s")
	wantStr(t, sub, "deadLetterPolicy.deadLetterTopic", "projects/"+testProject+"/topics/orders-dlq")
	if v, ok := sub.inputs["enableExactlyOnceDelivery"]; !ok || !v.IsBool() || !v.BoolValue() {
		t.Errorf("enableExactlyOnceDelivery = %v, want true", v)
	}
	if has(sub, "pushConfig") {
		t.Error("the pull subscription has a push config")
	}
	for _, dep := range []string{"orders-dlq-publisher", "orders-dlq-sub"} {
		if !m.dependsOn(t, sub, dep) {
			t.Errorf("subscription does not wait for %s", dep)
		}
	}
	dlqSub := m.one(t, "gcp:pubsub/subscription:Subscription", "orders-dlq-sub")
	wantStr(t, dlqSub, "expirationPolicy.ttl", "")

	pub := m.one(t, "gcp:pubsub/topicIAMMember:TopicIAMMember", "orders-dlq-publisher")
	wantStr(t, pub, "role", "roles/pubsub.publisher")
	wantStr(t, pub, "member", testAgent)
	agent := m.one(t, "gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember", "orders-sub-agent")
	wantStr(t, agent, "role", "roles/pubsub.subscriber")
	wantStr(t, agent, "member", testAgent)
	workers := m.one(t, "gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember", "orders-sub-workers")
	wantStr(t, workers, "subscription", "orders-sub")
	wantStr(t, workers, "role", "roles/pubsub.subscriber")
	wantStr(t, workers, "member", workersMember)
	if n := len(m.of("gcp:pubsub/topicIAMMember:TopicIAMMember")) + len(m.of("gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember")); n != 3 {
		t.Errorf("%d IAM members, want 3", n)
	}
}

// TestPullSubscriptionRefusesUnsafePlan: an unsafe pull plan stops before any
// resource is registered, with the sizing sentence naming the fix.
func TestPullSubscriptionRefusesUnsafePlan(t *testing.T) {
	args := pullArgs()
	args.Plan.MaxOutstandingMessages = 100
	m, err := newPull(args)
	if !errors.Is(err, sizing.ErrUnsafePlan) || !strings.Contains(err.Error(), "lower it to 10") {
		t.Fatalf("err = %v, want the unsafe pull plan", err)
	}
	if len(m.res) != 0 {
		t.Fatalf("%d resources registered before the refusal", len(m.res))
	}
	if _, err := newPull(&PullSubscriptionArgs{Project: pulumi.String(testProject), Topic: pulumi.String("t")}); err == nil {
		t.Fatal("no SubscriberMember accepted")
	}
}
