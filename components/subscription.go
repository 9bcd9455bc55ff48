package components

import (
	"errors"
	"fmt"
	"time"

	"github.com/oncegate/oncegate/sizing"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/cloudrunv2"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/organizations"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/pubsub"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/serviceaccount"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// PushSubscriptionArgs configure PushSubscription. Project, Topic and
// Endpoint.URL are required.
type PushSubscriptionArgs struct {
	// Project is the project ID. Required.
	Project pulumi.StringInput
	// ProjectNumber is the project's number, which names the Pub/Sub service
	// agent (service-<number>@gcp-sa-pubsub.iam.gserviceaccount.com). Nil
	// means it is looked up from Project.
	ProjectNumber pulumi.StringInput
	// Topic is the source topic's ID ("projects/<p>/topics/<t>") or name.
	// Required.
	Topic pulumi.StringInput
	// Plan sets the ack deadline, the retry policy and the dead-letter
	// policy's max delivery attempts. It is validated with
	// sizing.Plan.Validate; an unsafe plan is an error.
	Plan sizing.Plan
	// Endpoint is where messages are pushed. Required.
	Endpoint PushEndpointArgs
	// PushServiceAccount is the identity of the push requests.
	PushServiceAccount PushServiceAccountArgs
	// DeadLetter configures the dead-letter topic and its subscription.
	DeadLetter DeadLetterArgs
	// Name is the subscription's name. Nil means one derived from the
	// component's name.
	Name pulumi.StringPtrInput
	// Labels are applied to the subscriptions and the dead-letter topic.
	Labels pulumi.StringMapInput
	// DependsOn makes every child wait for these resources, e.g. the
	// ProjectServices that enable the APIs it uses.
	DependsOn []pulumi.Resource
}

// PushEndpointArgs say where and to whom messages are pushed.
type PushEndpointArgs struct {
	// URL is the HTTPS push endpoint, e.g. a Cloud Run service's URL.
	// Required.
	URL pulumi.StringInput
	// Audience is the OIDC token's audience. Nil means URL.
	Audience pulumi.StringInput
	// ServiceName and ServiceLocation name the Cloud Run service behind URL;
	// when both are set the push account is granted roles/run.invoker on it.
	ServiceName, ServiceLocation pulumi.StringInput
}

// PushServiceAccountArgs choose the push identity.
type PushServiceAccountArgs struct {
	// Email of an existing account to push as. Nil creates one.
	Email pulumi.StringInput
	// AccountID of the created account. Empty means one derived from the
	// component's name ("<name>-push").
	AccountID string
}

// DeadLetterArgs configure the dead-letter topic and its pull subscription.
type DeadLetterArgs struct {
	// TopicName is the dead-letter topic's name. Nil means one derived from
	// the component's name.
	TopicName pulumi.StringPtrInput
	// Retention is how long the dead-letter subscription keeps messages,
	// 10 minutes to 31 days. Zero means DefaultDeadLetterRetention.
	Retention time.Duration
}

// PushSubscription is a push subscription that always has a retry policy
// (without one Pub/Sub redelivers at once), a dead-letter policy sized by the
// plan, an OIDC token from a dedicated push account, and a dead-letter topic
// with a never-expiring pull subscription (dead letters published to a topic
// without a subscription are lost). The Pub/Sub service agent is granted
// publisher on the dead-letter topic, subscriber on the subscription and token
// creator on the push account. Source: Pub/Sub "Dead-letter topics" and
// "Authentication for push subscriptions",
// https://cloud.google.com/pubsub/docs/handling-failures and
// https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions
type PushSubscription struct {
	pulumi.ResourceState

	// SubscriptionName is the push subscription's name.
	SubscriptionName pulumi.StringOutput `pulumi:"subscriptionName"`
	// DeadLetterTopicName is the dead-letter topic's name.
	DeadLetterTopicName pulumi.StringOutput `pulumi:"deadLetterTopicName"`
	// DeadLetterSubscriptionName is the dead-letter pull subscription's name.
	DeadLetterSubscriptionName pulumi.StringOutput `pulumi:"deadLetterSubscriptionName"`
	// PushServiceAccountEmail is the push identity's email.
	PushServiceAccountEmail pulumi.StringOutput `pulumi:"pushServiceAccountEmail"`
	// ServiceAgentEmail is the project's Pub/Sub service agent.
	ServiceAgentEmail pulumi.StringOutput `pulumi:"serviceAgentEmail"`
	// Plan is the resolved plan as its ONCEGATE_* variables.
	Plan pulumi.StringMapOutput `pulumi:"plan"`
}

// NewPushSubscription registers a PushSubscription component named name. It
// returns an error, before registering anything, for a missing required
// argument, an unsafe plan (the sizing sentences), a dead-letter retention
// outside Pub/Sub's range or an invalid account ID.
func NewPushSubscription(ctx *pulumi.Context, name string, args *PushSubscriptionArgs, opts ...pulumi.ResourceOption) (*PushSubscription, error) {
	if args == nil || args.Project == nil || args.Topic == nil || args.Endpoint.URL == nil {
		return nil, errors.New("push subscription: Project, Topic and Endpoint.URL are required")
	}
	plan, err := resolvePlan(args.Plan)
	if err != nil {
		return nil, fmt.Errorf("push subscription %q: %w", name, err)
	}
	retention := args.DeadLetter.Retention
	if retention == 0 {
		retention = DefaultDeadLetterRetention
	}
	if retention < 10*time.Minute || retention > DefaultDeadLetterRetention {
		return nil, fmt.Errorf("push subscription %q: DeadLetter.Retention must be 10m–744h (got %s); change it or leave zero for 31 days", name, retention)
	}
	pushID := args.PushServiceAccount.AccountID
	if pushID == "" {
		pushID = accountID(name, "push")
	} else if err := validAccountID("push subscription "+name+": PushServiceAccount.AccountID", pushID); err != nil {
		return nil, err
	}

	c := &PushSubscription{}
	if err := ctx.RegisterComponentResource(typePushSubscription, name, c, opts...); err != nil {
		return nil, err
	}
	parent := pulumi.Composite(pulumi.Parent(c), pulumi.DependsOn(args.DependsOn))
	wrap := func(what string, err error) error { return fmt.Errorf("push subscription %q: %s: %w", name, what, err) }

	number := args.ProjectNumber
	if number == nil {
		number = organizations.LookupProjectOutput(ctx, organizations.LookupProjectOutputArgs{ProjectId: args.Project.ToStringOutput().ToStringPtrOutput()}, pulumi.Parent(c)).Number()
	}
	agent := pulumi.Sprintf("service-%s@gcp-sa-pubsub.iam.gserviceaccount.com", number)
	agentMember := pulumi.Sprintf("serviceAccount:%s", agent)

	// The push identity, and the agent's right to mint its tokens.
	pushEmail := args.PushServiceAccount.Email
	var pushAccountName pulumi.StringInput
	if pushEmail == nil {
		sa, err := serviceaccount.NewAccount(ctx, name+"-push-sa", &serviceaccount.AccountArgs{
			Project:     args.Project,
			AccountId:   pulumi.String(pushID),
			DisplayName: pulumi.String("oncegate push (" + name + ")"),
		}, parent)
		if err != nil {
			return nil, wrap("push account", err)
		}
		pushEmail, pushAccountName = sa.Email, sa.Name
	} else {
		pushAccountName = pulumi.Sprintf("projects/%s/serviceAccounts/%s", args.Project, pushEmail)
	}
	pushMember := pulumi.Sprintf("serviceAccount:%s", pushEmail)
	tokenGrant, err := serviceaccount.NewIAMMember(ctx, name+"-token-creator", &serviceaccount.IAMMemberArgs{
		ServiceAccountId: pushAccountName,
		Role:             pulumi.String(roleTokenCreator),
		Member:           agentMember,
	}, parent)
	if err != nil {
		return nil, wrap("token creator", err)
	}
	deps := []pulumi.Resource{tokenGrant}
	if args.Endpoint.ServiceName != nil && args.Endpoint.ServiceLocation != nil {
		invoker, err := cloudrunv2.NewServiceIamMember(ctx, name+"-invoker", &cloudrunv2.ServiceIamMemberArgs{
			Project:  args.Project,
			Location: args.Endpoint.ServiceLocation,
			Name:     args.Endpoint.ServiceName,
			Role:     pulumi.String(roleInvoker),
			Member:   pushMember,
		}, parent)
		if err != nil {
			return nil, wrap("invoker", err)
		}
		deps = append(deps, invoker)
	}

	// The dead-letter topic, its subscription and the agent's right to publish.
	dlq, err := pubsub.NewTopic(ctx, name+"-dlq", &pubsub.TopicArgs{
		Project: args.Project,
		Name:    args.DeadLetter.TopicName,
		Labels:  args.Labels,
	}, parent)
	if err != nil {
		return nil, wrap("dead-letter topic", err)
	}
	dlqSub, err := pubsub.NewSubscription(ctx, name+"-dlq-sub", &pubsub.SubscriptionArgs{
		Project:                  args.Project,
		Topic:                    dlq.Name,
		MessageRetentionDuration: pulumi.String(googleDuration(retention)),
		ExpirationPolicy:         &pubsub.SubscriptionExpirationPolicyArgs{Ttl: pulumi.String("")},
		Labels:                   args.Labels,
	}, parent)
	if err != nil {
		return nil, wrap("dead-letter subscription", err)
	}
	publisher, err := pubsub.NewTopicIAMMember(ctx, name+"-dlq-publisher", &pubsub.TopicIAMMemberArgs{
		Project: args.Project,
		Topic:   dlq.Name,
		Role:    pulumi.String(rolePublisher),
		Member:  agentMember,
	}, parent)
	if err != nil {
		return nil, wrap("dead-letter publisher", err)
	}
	deps = append(deps, publisher, dlqSub)

	audience := args.Endpoint.Audience
	if audience == nil {
		audience = args.Endpoint.URL
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
		PushConfig: &pubsub.SubscriptionPushConfigArgs{
			PushEndpoint: args.Endpoint.URL,
			OidcToken: &pubsub.SubscriptionPushConfigOidcTokenArgs{
				ServiceAccountEmail: pushEmail,
				Audience:            audience,
			},
		},
		ExpirationPolicy: &pubsub.SubscriptionExpirationPolicyArgs{Ttl: pulumi.String("")},
		Labels:           args.Labels,
	}, parent, pulumi.DependsOn(deps))
	if err != nil {
		return nil, wrap("subscription", err)
	}
	// Dead-lettering acks the message on the source subscription as the agent.
	if _, err := pubsub.NewSubscriptionIAMMember(ctx, name+"-sub-subscriber", &pubsub.SubscriptionIAMMemberArgs{
		Project:      args.Project,
		Subscription: sub.Name,
		Role:         pulumi.String(roleSubscriber),
		Member:       agentMember,
	}, parent); err != nil {
		return nil, wrap("subscriber", err)
	}

	c.SubscriptionName = sub.Name
	c.DeadLetterTopicName = dlq.Name
	c.DeadLetterSubscriptionName = dlqSub.Name
	c.PushServiceAccountEmail = pushEmail.ToStringOutput()
	c.ServiceAgentEmail = agent
	c.Plan = pulumi.ToStringMap(plan.Env()).ToStringMapOutput()
	if err := ctx.RegisterResourceOutputs(c, pulumi.Map{
		"subscriptionName": c.SubscriptionName, "deadLetterTopicName": c.DeadLetterTopicName,
		"deadLetterSubscriptionName": c.DeadLetterSubscriptionName, "pushServiceAccountEmail": c.PushServiceAccountEmail,
		"serviceAgentEmail": c.ServiceAgentEmail, "plan": c.Plan,
	}); err != nil {
		return nil, err
	}
	return c, nil
}
