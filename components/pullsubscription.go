package components

import (
	"errors"
	"fmt"
	"time"

	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/pubsub"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/oncegate/oncegate/sizing"
)

const typePullSubscription = "oncegate:gcp:PullSubscription"

// PullSubscriptionArgs configure PullSubscription. Project, Topic and
// SubscriberMember are required.
type PullSubscriptionArgs struct {
	// Project is the project ID. Required.
	Project pulumi.StringInput
	// ServiceAgentEmail is the project's Pub/Sub service agent. Nil creates it
	// with projects.ServiceIdentity, as PushSubscriptionArgs.ServiceAgentEmail
	// does (a fresh project may not have it yet).
	ServiceAgentEmail pulumi.StringInput
	// Topic is the source topic's ID or name. Required.
	Topic pulumi.StringInput
	// Plan sets the ack deadline, the retry policy and the dead-letter
	// policy's max delivery attempts, and the workers' ONCEGATE_* and
	// ONCEGATE_PULL_* variables (the Plan output). It is validated with
	// sizing.PullPlan.Validate; an unsafe plan is an error.
	Plan sizing.PullPlan
	// SubscriberMember is the workers' identity
	// ("serviceAccount:<email>"), granted roles/pubsub.subscriber on the
	// subscription so Receive may pull and ack. Required.
	SubscriberMember pulumi.StringInput
	// ExactlyOnce enables exactly-once delivery (pull subscriptions only;
	// Pub/Sub, "Exactly-once delivery",
	// https://cloud.google.com/pubsub/docs/exactly-once-delivery).
	ExactlyOnce bool
	// DeadLetter configures the dead-letter topic and its subscription.
	DeadLetter DeadLetterArgs
	// Name is the subscription's name. Nil means one derived from the
	// component's name.
	Name pulumi.StringPtrInput
	// Labels are applied to the subscriptions and the dead-letter topic.
	Labels pulumi.StringMapInput
	// DependsOn makes every child wait for these resources.
	DependsOn []pulumi.Resource
}

// PullSubscription is a pull subscription for oncegate pull workers
// (runtime/pull): a retry policy and a dead-letter policy sized by the pull plan,
// optional exactly-once delivery, a dead-letter topic with a never-expiring
// subscription, roles/pubsub.subscriber for the workers, and for the Pub/Sub
// service agent publisher on the dead-letter topic and subscriber on the
// subscription (it acks what it forwards). Source: Pub/Sub "Dead-letter topics",
// https://cloud.google.com/pubsub/docs/handling-failures, and "Access control
// with IAM", https://cloud.google.com/pubsub/docs/access-control
type PullSubscription struct {
	pulumi.ResourceState

	// SubscriptionName is the pull subscription's name
	// (ONCEGATE_PULL_SUBSCRIPTION).
	SubscriptionName pulumi.StringOutput `pulumi:"subscriptionName"`
	// DeadLetterTopicName is the dead-letter topic's name.
	DeadLetterTopicName pulumi.StringOutput `pulumi:"deadLetterTopicName"`
	// DeadLetterSubscriptionName is the dead-letter subscription's name.
	DeadLetterSubscriptionName pulumi.StringOutput `pulumi:"deadLetterSubscriptionName"`
	// ServiceAgentEmail is the project's Pub/Sub service agent.
	ServiceAgentEmail pulumi.StringOutput `pulumi:"serviceAgentEmail"`
	// Plan is the resolved pull plan as its ONCEGATE_* variables, for the
	// workers' environment.
	Plan pulumi.StringMapOutput `pulumi:"plan"`
}

// NewPullSubscription registers a PullSubscription component named name. It
// returns an error, before registering anything, for a missing required
// argument, an unsafe pull plan (the sizing sentences with their fixes) or a
// dead-letter retention outside Pub/Sub's range.
func NewPullSubscription(ctx *pulumi.Context, name string, args *PullSubscriptionArgs, opts ...pulumi.ResourceOption) (*PullSubscription, error) {
	if args == nil || args.Project == nil || args.Topic == nil || args.SubscriberMember == nil {
		return nil, errors.New("pull subscription: Project, Topic and SubscriberMember are required")
	}
	if err := args.Plan.Validate(); err != nil {
		return nil, fmt.Errorf("pull subscription %q: %w", name, err)
	}
	plan := args.Plan.WithDefaults()
	retention := args.DeadLetter.Retention
	if retention == 0 {
		retention = DefaultDeadLetterRetention
	}
	if retention < 10*time.Minute || retention > DefaultDeadLetterRetention {
		return nil, fmt.Errorf("pull subscription %q: DeadLetter.Retention must be 10m–744h (got %s); change it or leave zero for 31 days", name, retention)
	}

	c := &PullSubscription{}
	if err := ctx.RegisterComponentResource(typePullSubscription, name, c, opts...); err != nil {
		return nil, err
	}
	parent := pulumi.Composite(pulumi.Parent(c), pulumi.DependsOn(args.DependsOn))
	wrap := func(what string, err error) error { return fmt.Errorf("pull subscription %q: %s: %w", name, what, err) }

	agent, err := serviceAgent(ctx, name+"-agent", args.Project, args.ServiceAgentEmail, parent)
	if err != nil {
		return nil, wrap("service agent", err)
	}
	agentMember := pulumi.Sprintf("serviceAccount:%s", agent)

	dlq, err := pubsub.NewTopic(ctx, name+"-dlq", &pubsub.TopicArgs{Project: args.Project, Name: args.DeadLetter.TopicName, Labels: args.Labels}, parent)
	if err != nil {
		return nil, wrap("dead-letter topic", err)
	}
	dlqSub, err := pubsub.NewSubscription(ctx, name+"-dlq-sub", &pubsub.SubscriptionArgs{
		Project: args.Project, Topic: dlq.Name, Labels: args.Labels,
		MessageRetentionDuration: pulumi.String(googleDuration(retention)),
		ExpirationPolicy:         &pubsub.SubscriptionExpirationPolicyArgs{Ttl: pulumi.String("")},
	}, parent)
	if err != nil {
		return nil, wrap("dead-letter subscription", err)
	}
	publisher, err := pubsub.NewTopicIAMMember(ctx, name+"-dlq-publisher", &pubsub.TopicIAMMemberArgs{
		Project: args.Project, Topic: dlq.Name, Role: pulumi.String(rolePublisher), Member: agentMember,
	}, parent)
	if err != nil {
		return nil, wrap("dead-letter publisher", err)
	}

	sub, err := pubsub.NewSubscription(ctx, name+"-sub", &pubsub.SubscriptionArgs{
		Project:            args.Project,
		Name:               args.Name,
		Topic:              args.Topic,
		AckDeadlineSeconds: pulumi.Int(int(plan.AckDeadline / time.Second)),
		RetryPolicy: &pubsub.SubscriptionRetryPolicyArgs{
			MinimumBackoff: pulumi.String(googleDuration(plan.MinBackoff)),
			MaximumBackoff: pulumi.String(googleDuration(plan.MaxBackoff)),
		},
		DeadLetterPolicy: &pubsub.SubscriptionDeadLetterPolicyArgs{
			DeadLetterTopic:     dlq.ID().ToStringOutput(),
			MaxDeliveryAttempts: pulumi.Int(plan.MaxDeliveryAttempts),
		},
		EnableExactlyOnceDelivery: pulumi.Bool(args.ExactlyOnce),
		ExpirationPolicy:          &pubsub.SubscriptionExpirationPolicyArgs{Ttl: pulumi.String("")},
		Labels:                    args.Labels,
	}, parent, pulumi.DependsOn([]pulumi.Resource{publisher, dlqSub}))
	if err != nil {
		return nil, wrap("subscription", err)
	}
	for _, g := range []struct {
		suffix string
		member pulumi.StringInput
	}{{"-sub-agent", agentMember}, {"-sub-workers", args.SubscriberMember}} {
		if _, err := pubsub.NewSubscriptionIAMMember(ctx, name+g.suffix, &pubsub.SubscriptionIAMMemberArgs{
			Project: args.Project, Subscription: sub.Name, Role: pulumi.String(roleSubscriber), Member: g.member,
		}, parent); err != nil {
			return nil, wrap("subscriber "+g.suffix[5:], err)
		}
	}

	c.SubscriptionName = sub.Name
	c.DeadLetterTopicName = dlq.Name
	c.DeadLetterSubscriptionName = dlqSub.Name
	c.ServiceAgentEmail = agent
	c.Plan = pulumi.ToStringMap(plan.Env()).ToStringMapOutput()
	if err := ctx.RegisterResourceOutputs(c, pulumi.Map{
		"subscriptionName": c.SubscriptionName, "deadLetterTopicName": c.DeadLetterTopicName,
		"deadLetterSubscriptionName": c.DeadLetterSubscriptionName, "serviceAgentEmail": c.ServiceAgentEmail,
		"plan": c.Plan,
	}); err != nil {
		return nil, err
	}
	return c, nil
}
