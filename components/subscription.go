package components

import (
	"fmt"
	"time"

	"github.com/oncegate/oncegate/sizing"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/cloudrunv2"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/projects"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/pubsub"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/serviceaccount"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// PushSubscriptionArgs configure PushSubscription. Project, Topic and
// Endpoint.URL are required.
type PushSubscriptionArgs struct {
	// Project is the project ID. Required.
	Project pulumi.StringInput
	// ServiceAgentEmail is the project's Pub/Sub service agent
	// (service-<number>@gcp-sa-pubsub.iam.gserviceaccount.com). Nil creates
	// it with projects.ServiceIdentity for pubsub.googleapis.com, which also
	// works on a fresh project where the agent does not exist yet and needs no
	// Cloud Resource Manager lookup of the project number. Source: Pub/Sub
	// "Dead-letter topics", https://cloud.google.com/pubsub/docs/handling-failures
	// ("Grant IAM roles to use dead-letter topics").
	ServiceAgentEmail pulumi.StringInput
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
	// Filter delivers only the messages matching this Pub/Sub filter
	// expression (on attributes); empty delivers all. Pub/Sub acknowledges
	// the others itself, so they never reach the gateway. Source: Pub/Sub
	// "Filter messages from a subscription",
	// https://cloud.google.com/pubsub/docs/subscription-message-filter
	Filter string
	// KMSKeyName encrypts the dead-letter topic with this Cloud KMS key
	// ("projects/<p>/locations/<l>/keyRings/<r>/cryptoKeys/<k>"); the service
	// agent is granted roles/cloudkms.cryptoKeyEncrypterDecrypter on it. Nil
	// means Google-managed encryption.
	KMSKeyName pulumi.StringInput
	// AllowedPersistenceRegions restricts where the dead-letter topic stores
	// messages (the topic's messageStoragePolicy); empty means the
	// organisation's policy. Source: Pub/Sub "Configure message storage
	// policies", https://cloud.google.com/pubsub/docs/resource-location-restriction
	AllowedPersistenceRegions []string
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
	// the push account is granted roles/run.invoker on it. Both are required
	// unless InvokerGrantedElsewhere is set: without the grant every push is
	// answered 403 until the message is dead-lettered.
	ServiceName, ServiceLocation pulumi.StringInput
	// InvokerGrantedElsewhere says the push account may already invoke the
	// endpoint (granted outside this component, or the endpoint is not Cloud
	// Run), so no grant is made. It may not be combined with ServiceName.
	InvokerGrantedElsewhere bool
	// Service is the resource behind ServiceName when the same program
	// creates it: the invoker grant is then replaced with it (a replaced
	// service starts with an empty IAM policy).
	Service pulumi.Resource
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
// creator on the push account; each grant is replaced together with the
// resource it is on (pulumi.DeletedWith: "If the named resource is being
// replaced, this resource will be replaced as well"), so a fixed-name topic or
// subscription that is replaced gets its binding back. Source: Pub/Sub
// "Dead-letter topics" and "Authentication for push subscriptions",
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
	// Audience is the OIDC token's audience.
	Audience pulumi.StringOutput `pulumi:"audience"`
	// Plan is the resolved plan as its ONCEGATE_* variables.
	Plan pulumi.StringMapOutput `pulumi:"plan"`
}

// pushSubscriptionSpec is PushSubscriptionArgs checked, with defaults.
type pushSubscriptionSpec struct {
	plan      sizing.Plan
	retention time.Duration
	pushID    string
}

// validate checks args without registering anything. It returns an error for a
// missing required argument, an unsafe plan (the sizing sentences), a
// dead-letter retention outside Pub/Sub's range, an invalid account ID or an
// endpoint that would get no invoker grant.
func (args *PushSubscriptionArgs) validate(name string) (pushSubscriptionSpec, error) {
	if args == nil || args.Project == nil || args.Topic == nil || args.Endpoint.URL == nil {
		return pushSubscriptionSpec{}, fmt.Errorf("push subscription %q: Project, Topic and Endpoint.URL are required", name)
	}
	plan, err := resolvePlan(args.Plan)
	if err != nil {
		return pushSubscriptionSpec{}, fmt.Errorf("push subscription %q: %w", name, err)
	}
	s := pushSubscriptionSpec{plan: plan, retention: args.DeadLetter.Retention, pushID: args.PushServiceAccount.AccountID}
	if s.retention == 0 {
		s.retention = DefaultDeadLetterRetention
	}
	if s.retention < 10*time.Minute || s.retention > DefaultDeadLetterRetention {
		return s, fmt.Errorf("push subscription %q: DeadLetter.Retention must be 10m–744h (got %s); change it or leave zero for 31 days", name, s.retention)
	}
	if s.pushID == "" {
		s.pushID = accountID(name, "push")
	} else if err := validAccountID("push subscription "+name+": PushServiceAccount.AccountID", s.pushID); err != nil {
		return s, err
	}
	ep := args.Endpoint
	switch named := ep.ServiceName != nil || ep.ServiceLocation != nil; {
	case named && ep.InvokerGrantedElsewhere:
		return s, fmt.Errorf("push subscription %q: Endpoint.InvokerGrantedElsewhere contradicts Endpoint.ServiceName; set one", name)
	case named && (ep.ServiceName == nil || ep.ServiceLocation == nil):
		return s, fmt.Errorf("push subscription %q: Endpoint.ServiceName and Endpoint.ServiceLocation go together (the invoker grant needs both)", name)
	case !named && !ep.InvokerGrantedElsewhere:
		return s, fmt.Errorf("push subscription %q: Endpoint.ServiceName and ServiceLocation are required so the push account gets roles/run.invoker (without it every push is answered 403); set Endpoint.InvokerGrantedElsewhere if it is granted outside", name)
	}
	if err := validRegions("push subscription "+name+": AllowedPersistenceRegions", args.AllowedPersistenceRegions); err != nil {
		return s, err
	}
	return s, nil
}

// NewPushSubscription registers a PushSubscription component named name. It
// returns an error, before registering anything, for any input validate
// refuses.
func NewPushSubscription(ctx *pulumi.Context, name string, args *PushSubscriptionArgs, opts ...pulumi.ResourceOption) (*PushSubscription, error) {
	spec, err := args.validate(name)
	if err != nil {
		return nil, err
	}
	plan := spec.plan

	c := &PushSubscription{}
	if err := ctx.RegisterComponentResource(typePushSubscription, name, c, opts...); err != nil {
		return nil, err
	}
	parent := pulumi.Composite(pulumi.Parent(c), pulumi.DependsOn(args.DependsOn))
	wrap := func(what string, err error) error { return fmt.Errorf("push subscription %q: %s: %w", name, what, err) }

	agent, err := serviceAgent(ctx, name+"-agent", args.Project, args.ServiceAgentEmail, parent)
	if err != nil {
		return nil, wrap("service agent", err)
	}
	agentMember := pulumi.Sprintf("serviceAccount:%s", agent)

	// The push identity, and the agent's right to mint its tokens.
	pushEmail := args.PushServiceAccount.Email
	var pushAccountName pulumi.StringInput
	tokenOpts := []pulumi.ResourceOption{parent}
	if pushEmail == nil {
		sa, err := serviceaccount.NewAccount(ctx, name+"-push-sa", &serviceaccount.AccountArgs{
			Project:     args.Project,
			AccountId:   pulumi.String(spec.pushID),
			DisplayName: pulumi.String("oncegate push (" + name + ")"),
		}, parent)
		if err != nil {
			return nil, wrap("push account", err)
		}
		pushEmail, pushAccountName = sa.Email, sa.Name
		tokenOpts = append(tokenOpts, pulumi.DeletedWith(sa))
	} else {
		pushAccountName = pulumi.Sprintf("projects/%s/serviceAccounts/%s", args.Project, pushEmail)
	}
	pushMember := pulumi.Sprintf("serviceAccount:%s", pushEmail)
	tokenGrant, err := serviceaccount.NewIAMMember(ctx, name+"-token-creator", &serviceaccount.IAMMemberArgs{
		ServiceAccountId: pushAccountName,
		Role:             pulumi.String(roleTokenCreator),
		Member:           agentMember,
	}, tokenOpts...)
	if err != nil {
		return nil, wrap("token creator", err)
	}
	deps := []pulumi.Resource{tokenGrant}
	if ep := args.Endpoint; ep.ServiceName != nil {
		invOpts := []pulumi.ResourceOption{parent}
		if ep.Service != nil {
			invOpts = append(invOpts, pulumi.DeletedWith(ep.Service))
		}
		invoker, err := cloudrunv2.NewServiceIamMember(ctx, name+"-invoker", &cloudrunv2.ServiceIamMemberArgs{
			Project:  args.Project,
			Location: ep.ServiceLocation,
			Name:     ep.ServiceName,
			Role:     pulumi.String(roleInvoker),
			Member:   pushMember,
		}, invOpts...)
		if err != nil {
			return nil, wrap("invoker", err)
		}
		deps = append(deps, invoker)
	}

	// The dead-letter topic, its subscription and the agent's right to publish.
	dlqArgs := &pubsub.TopicArgs{Project: args.Project, Name: args.DeadLetter.TopicName, Labels: args.Labels}
	dlqOpts := []pulumi.ResourceOption{parent}
	if args.KMSKeyName != nil {
		kms, err := kmsGrant(ctx, name+"-dlq-kms", args.KMSKeyName, agentMember, parent)
		if err != nil {
			return nil, wrap("dead-letter key", err)
		}
		dlqArgs.KmsKeyName = args.KMSKeyName
		dlqOpts = append(dlqOpts, pulumi.DependsOn([]pulumi.Resource{kms}))
	}
	if len(args.AllowedPersistenceRegions) > 0 {
		dlqArgs.MessageStoragePolicy = storagePolicy(args.AllowedPersistenceRegions)
	}
	dlq, err := pubsub.NewTopic(ctx, name+"-dlq", dlqArgs, dlqOpts...)
	if err != nil {
		return nil, wrap("dead-letter topic", err)
	}
	dlqSub, err := pubsub.NewSubscription(ctx, name+"-dlq-sub", &pubsub.SubscriptionArgs{
		Project:                  args.Project,
		Topic:                    dlq.Name,
		MessageRetentionDuration: pulumi.String(googleDuration(spec.retention)),
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
	}, parent, pulumi.DeletedWith(dlq))
	if err != nil {
		return nil, wrap("dead-letter publisher", err)
	}
	deps = append(deps, publisher, dlqSub)

	audience := args.Endpoint.Audience
	if audience == nil {
		audience = args.Endpoint.URL
	}
	subArgs := &pubsub.SubscriptionArgs{
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
	}
	if args.Filter != "" {
		subArgs.Filter = pulumi.String(args.Filter)
	}
	sub, err := pubsub.NewSubscription(ctx, name+"-sub", subArgs, parent, pulumi.DependsOn(deps))
	if err != nil {
		return nil, wrap("subscription", err)
	}
	// Dead-lettering acks the message on the source subscription as the agent.
	if _, err := pubsub.NewSubscriptionIAMMember(ctx, name+"-sub-subscriber", &pubsub.SubscriptionIAMMemberArgs{
		Project:      args.Project,
		Subscription: sub.Name,
		Role:         pulumi.String(roleSubscriber),
		Member:       agentMember,
	}, parent, pulumi.DeletedWith(sub)); err != nil {
		return nil, wrap("subscriber", err)
	}

	c.SubscriptionName = sub.Name
	c.DeadLetterTopicName = dlq.Name
	c.DeadLetterSubscriptionName = dlqSub.Name
	c.PushServiceAccountEmail = tie(c, pushEmail)
	c.ServiceAgentEmail = tie(c, agent)
	c.Audience = tie(c, audience)
	c.Plan = tieMap(c, plan.Env())
	if err := ctx.RegisterResourceOutputs(c, pulumi.Map{
		"subscriptionName": c.SubscriptionName, "deadLetterTopicName": c.DeadLetterTopicName,
		"deadLetterSubscriptionName": c.DeadLetterSubscriptionName, "pushServiceAccountEmail": c.PushServiceAccountEmail,
		"serviceAgentEmail": c.ServiceAgentEmail, "audience": c.Audience, "plan": c.Plan,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// serviceAgent returns email when it is set, else the email of the project's
// Pub/Sub service agent, created (or read) with pubsubAgent.
func serviceAgent(ctx *pulumi.Context, name string, project, email pulumi.StringInput, opts ...pulumi.ResourceOption) (pulumi.StringOutput, error) {
	if email != nil {
		return email.ToStringOutput(), nil
	}
	id, err := pubsubAgent(ctx, name, project, opts...)
	if err != nil {
		return pulumi.StringOutput{}, err
	}
	return id.Email, nil
}

// pubsubAgent creates (or reads, when it exists) the project's Pub/Sub service
// agent. Source: Pub/Sub "Dead-letter topics" and the provider's
// google_project_service_identity (generateServiceIdentity).
func pubsubAgent(ctx *pulumi.Context, name string, project pulumi.StringInput, opts ...pulumi.ResourceOption) (*projects.ServiceIdentity, error) {
	return projects.NewServiceIdentity(ctx, name, &projects.ServiceIdentityArgs{
		Project: project,
		Service: pulumi.String("pubsub.googleapis.com"),
	}, opts...)
}
