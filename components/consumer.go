package components

import (
	"errors"
	"fmt"

	"github.com/oncegate/oncegate/sizing"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/pubsub"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// ConsumerArgs configure Consumer: required scalars on top, then one struct
// per concern.
type ConsumerArgs struct {
	// Project is the project ID. Required.
	Project pulumi.StringInput
	// ProjectNumber names the Pub/Sub service agent. Nil means it is looked
	// up from Project (which needs the Cloud Resource Manager API).
	ProjectNumber pulumi.StringInput
	// Region is the Cloud Run location. Required unless Service.Existing is
	// set.
	Region pulumi.StringInput
	// Plan is the one set of numbers for the subscription, the service and
	// the gateway. An unsafe plan fails the deployment, at preview, with the
	// sizing package's sentences.
	Plan sizing.Plan
	// Namespace is ONCEGATE_NAMESPACE. Empty means the component's name.
	Namespace string

	Topic        ConsumerTopicArgs
	Subscription ConsumerSubscriptionArgs
	DeadLetter   DeadLetterArgs
	Service      ConsumerServiceArgs
	TTLPolicy    ConsumerTTLArgs

	// SkipServices leaves the project's APIs alone; by default the consumer
	// enables DefaultServices and makes every resource wait for them.
	SkipServices bool
	// Labels are applied to topics, subscriptions and the service.
	Labels pulumi.StringMapInput
}

// ConsumerTopicArgs choose the source topic.
type ConsumerTopicArgs struct {
	// Existing is the ID ("projects/<p>/topics/<t>") or name of a topic to
	// consume. Nil creates a topic.
	Existing pulumi.StringInput
	// Name of the created topic. Nil means one derived from the consumer's.
	Name pulumi.StringPtrInput
}

// ConsumerSubscriptionArgs configure the push subscription.
type ConsumerSubscriptionArgs struct {
	// Name of the subscription. Nil means one derived from the consumer's.
	Name pulumi.StringPtrInput
	// PushServiceAccount is the push identity; by default one is created.
	PushServiceAccount PushServiceAccountArgs
	// Audience of the OIDC token. Nil means the service URL.
	Audience pulumi.StringInput
}

// ConsumerServiceArgs configure the Cloud Run service, or name an existing one.
type ConsumerServiceArgs struct {
	// Image is the gateway's container image. Required unless Existing is set.
	Image pulumi.StringInput
	// Existing names a service deployed elsewhere instead of creating one. It
	// must carry the configuration contract itself (see Consumer.Plan).
	Existing *ExistingService
	// Name, ServiceAccountID, Concurrency, MinInstances, MaxInstances, Env,
	// Ingress and DeletionProtection are as in ServiceArgs.
	Name                       pulumi.StringPtrInput
	ServiceAccountID           string
	Concurrency                int
	MinInstances, MaxInstances int
	Env                        map[string]pulumi.StringInput
	Ingress                    string
	DeletionProtection         bool
}

// ExistingService is a Cloud Run service deployed outside the consumer.
type ExistingService struct {
	// URL is the service's URL, the push endpoint. Required.
	URL pulumi.StringInput
	// Name and Location of the service; when Name is set the push account is
	// granted run.invoker on it. Location defaults to the consumer's Region.
	Name, Location pulumi.StringInput
}

// ConsumerTTLArgs configure the TTL policy (see TTLPolicyArgs).
type ConsumerTTLArgs struct {
	// Kind is the gateway's Datastore kind. Empty means DefaultKind.
	Kind string
	// Database is the database ID. Empty means DefaultDatabase.
	Database string
	// CreateDatabase, when set, creates Database in Datastore mode.
	CreateDatabase *DatabaseArgs
	// KeepIndex leaves expires_at's single-field index on (see TTLPolicyArgs).
	KeepIndex bool
}

// Consumer provisions a whole oncegate consumer from one plan: the project's
// APIs, the source topic (or an existing one), the TTL policy (and optionally
// the database), the Cloud Run service (or an existing one) and the push
// subscription with its dead-letter topic and IAM.
type Consumer struct {
	pulumi.ResourceState

	// TopicName is the source topic's name or ID.
	TopicName pulumi.StringOutput `pulumi:"topicName"`
	// SubscriptionName is the push subscription's name.
	SubscriptionName pulumi.StringOutput `pulumi:"subscriptionName"`
	// DeadLetterTopicName is the dead-letter topic's name.
	DeadLetterTopicName pulumi.StringOutput `pulumi:"deadLetterTopicName"`
	// DeadLetterSubscriptionName is the dead-letter pull subscription's name.
	DeadLetterSubscriptionName pulumi.StringOutput `pulumi:"deadLetterSubscriptionName"`
	// ServiceURL is the push endpoint.
	ServiceURL pulumi.StringOutput `pulumi:"serviceUrl"`
	// ServiceName is the Cloud Run service's name (empty for an existing
	// service given by URL only).
	ServiceName pulumi.StringOutput `pulumi:"serviceName"`
	// PushServiceAccountEmail is the push identity.
	PushServiceAccountEmail pulumi.StringOutput `pulumi:"pushServiceAccountEmail"`
	// RuntimeServiceAccountEmail is the service's identity (empty for an
	// existing service).
	RuntimeServiceAccountEmail pulumi.StringOutput `pulumi:"runtimeServiceAccountEmail"`
	// Database and Kind are where the gateway keeps its records.
	Database pulumi.StringOutput `pulumi:"database"`
	Kind     pulumi.StringOutput `pulumi:"kind"`
	// Plan is the resolved plan as its ONCEGATE_* variables.
	Plan pulumi.StringMapOutput `pulumi:"plan"`
}

// NewConsumer registers a Consumer component named name. An unsafe plan or a
// missing required argument returns an error before anything is registered.
func NewConsumer(ctx *pulumi.Context, name string, args *ConsumerArgs, opts ...pulumi.ResourceOption) (*Consumer, error) {
	if args == nil || args.Project == nil {
		return nil, errors.New("consumer: Project is required")
	}
	svcArgs := args.Service
	if svcArgs.Existing == nil && (svcArgs.Image == nil || args.Region == nil) {
		return nil, fmt.Errorf("consumer %q: Service.Image and Region are required unless Service.Existing is set", name)
	}
	if svcArgs.Existing != nil && svcArgs.Existing.URL == nil {
		return nil, fmt.Errorf("consumer %q: Service.Existing.URL is required", name)
	}
	plan, err := resolvePlan(args.Plan)
	if err != nil {
		return nil, fmt.Errorf("consumer %q: %w", name, err)
	}
	namespace := args.Namespace
	if namespace == "" {
		namespace = name
	}

	c := &Consumer{}
	if err := ctx.RegisterComponentResource(typeConsumer, name, c, opts...); err != nil {
		return nil, err
	}
	parent := pulumi.Parent(c)
	var deps []pulumi.Resource
	if !args.SkipServices {
		apis, err := NewProjectServices(ctx, name+"-apis", &ProjectServicesArgs{Project: args.Project}, parent)
		if err != nil {
			return nil, err
		}
		deps = apis.Resources
	}

	topic := args.Topic.Existing
	if topic == nil {
		t, err := pubsub.NewTopic(ctx, name+"-topic", &pubsub.TopicArgs{
			Project: args.Project,
			Name:    args.Topic.Name,
			Labels:  args.Labels,
		}, parent, pulumi.DependsOn(deps))
		if err != nil {
			return nil, fmt.Errorf("consumer %q: topic: %w", name, err)
		}
		topic = t.Name
	}

	ttl, err := NewTTLPolicy(ctx, name+"-ttl", &TTLPolicyArgs{
		Project:        args.Project,
		Kind:           args.TTLPolicy.Kind,
		Database:       args.TTLPolicy.Database,
		CreateDatabase: args.TTLPolicy.CreateDatabase,
		KeepIndex:      args.TTLPolicy.KeepIndex,
		DependsOn:      deps,
	}, parent)
	if err != nil {
		return nil, err
	}

	endpoint := PushEndpointArgs{Audience: args.Subscription.Audience}
	runtimeEmail := pulumi.String("").ToStringOutput()
	if ex := svcArgs.Existing; ex != nil {
		endpoint.URL, endpoint.ServiceName, endpoint.ServiceLocation = ex.URL, ex.Name, ex.Location
		if endpoint.ServiceLocation == nil {
			endpoint.ServiceLocation = args.Region
		}
	} else {
		svc, err := NewService(ctx, name+"-service", &ServiceArgs{
			Project:            args.Project,
			Region:             args.Region,
			Image:              svcArgs.Image,
			Plan:               plan,
			Namespace:          namespace,
			Kind:               args.TTLPolicy.Kind,
			Database:           args.TTLPolicy.Database,
			Name:               svcArgs.Name,
			ServiceAccountID:   svcArgs.ServiceAccountID,
			Concurrency:        svcArgs.Concurrency,
			MinInstances:       svcArgs.MinInstances,
			MaxInstances:       svcArgs.MaxInstances,
			Env:                svcArgs.Env,
			Ingress:            svcArgs.Ingress,
			DeletionProtection: svcArgs.DeletionProtection,
			Labels:             args.Labels,
			// The gateway should not serve before its TTL policy exists.
			DependsOn: append(append([]pulumi.Resource{}, deps...), ttl),
		}, parent)
		if err != nil {
			return nil, err
		}
		endpoint.URL, endpoint.ServiceName, endpoint.ServiceLocation = svc.URL, svc.ServiceName, svc.Location
		runtimeEmail = svc.ServiceAccountEmail
	}

	sub, err := NewPushSubscription(ctx, name+"-push", &PushSubscriptionArgs{
		Project:            args.Project,
		ProjectNumber:      args.ProjectNumber,
		Topic:              topic,
		Plan:               plan,
		Endpoint:           endpoint,
		PushServiceAccount: args.Subscription.PushServiceAccount,
		DeadLetter:         args.DeadLetter,
		Name:               args.Subscription.Name,
		Labels:             args.Labels,
		DependsOn:          deps,
	}, parent)
	if err != nil {
		return nil, err
	}

	c.TopicName = topic.ToStringOutput()
	c.SubscriptionName = sub.SubscriptionName
	c.DeadLetterTopicName = sub.DeadLetterTopicName
	c.DeadLetterSubscriptionName = sub.DeadLetterSubscriptionName
	c.ServiceURL = endpoint.URL.ToStringOutput()
	c.ServiceName = pulumi.String("").ToStringOutput()
	if endpoint.ServiceName != nil {
		c.ServiceName = endpoint.ServiceName.ToStringOutput()
	}
	c.PushServiceAccountEmail = sub.PushServiceAccountEmail
	c.RuntimeServiceAccountEmail = runtimeEmail
	c.Database = ttl.Database
	c.Kind = ttl.Kind
	c.Plan = pulumi.ToStringMap(plan.Env()).ToStringMapOutput()
	if err := ctx.RegisterResourceOutputs(c, pulumi.Map{
		"topicName": c.TopicName, "subscriptionName": c.SubscriptionName,
		"deadLetterTopicName": c.DeadLetterTopicName, "deadLetterSubscriptionName": c.DeadLetterSubscriptionName,
		"serviceUrl": c.ServiceURL, "serviceName": c.ServiceName,
		"pushServiceAccountEmail": c.PushServiceAccountEmail, "runtimeServiceAccountEmail": c.RuntimeServiceAccountEmail,
		"database": c.Database, "kind": c.Kind, "plan": c.Plan,
	}); err != nil {
		return nil, err
	}
	return c, nil
}
