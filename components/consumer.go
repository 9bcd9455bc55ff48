package components

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/oncegate/oncegate/sizing"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/pubsub"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/serviceaccount"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// ConsumerArgs configure Consumer: required scalars on top, then one struct
// per concern.
type ConsumerArgs struct {
	// Project is the project ID. Required.
	Project pulumi.StringInput
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
	// TTLPolicy configures the Datastore backend's database and TTL policy;
	// it is ignored for Redis and SQL.
	TTLPolicy ConsumerTTLArgs
	// Alerts configure the Cloud Monitoring alert policies, on by default.
	Alerts ConsumerAlertsArgs

	// KMSKeyName encrypts the topics (the Pub/Sub service agent is granted
	// the key) and the created service's image with this Cloud KMS key. Nil
	// means Google-managed encryption.
	KMSKeyName pulumi.StringInput
	// SkipServices leaves the project's APIs alone; by default the consumer
	// enables every API its resources use and makes each resource wait.
	SkipServices bool
	// Labels are applied to topics, subscriptions, the service and the
	// resources it creates.
	Labels pulumi.StringMapInput
}

// ConsumerTopicArgs choose the source topic.
type ConsumerTopicArgs struct {
	// Existing is the ID ("projects/<p>/topics/<t>") or name of a topic to
	// consume. Nil creates a topic.
	Existing pulumi.StringInput
	// Name of the created topic. Nil means one derived from the consumer's.
	Name pulumi.StringPtrInput
	// AllowedPersistenceRegions restricts where the created topics store
	// messages (messageStoragePolicy). Empty means the organisation's policy.
	AllowedPersistenceRegions []string
}

// ConsumerSubscriptionArgs configure the push subscription.
type ConsumerSubscriptionArgs struct {
	// Name of the subscription. Nil means one derived from the consumer's.
	Name pulumi.StringPtrInput
	// PushServiceAccount is the push identity; by default one is created.
	PushServiceAccount PushServiceAccountArgs
	// Audience of the OIDC token. Nil means, for a created service,
	// "oncegate/<project>/<consumer name>", set as the service's custom
	// audience (its run.app URL is not known before it exists, and the
	// runtime must be told the audience); for an existing service, its URL.
	Audience pulumi.StringInput
	// Filter is the subscription's message filter (see PushSubscriptionArgs).
	Filter string
}

// ConsumerServiceArgs configure the Cloud Run service, or name an existing one.
type ConsumerServiceArgs struct {
	// Image is the gateway's container image. Required unless Existing is set.
	Image pulumi.StringInput
	// Existing names a service deployed elsewhere instead of creating one. It
	// must carry the configuration contract itself (see Consumer.Plan).
	Existing *ExistingService
	// Backend is where the gateway keeps its records (Datastore by default);
	// Backend.Datastore is taken from TTLPolicy.
	Backend BackendArgs
	// Name, ServiceAccountID, ServiceAccountEmail, Concurrency, MinInstances,
	// MaxInstances, CPU, Memory, HealthPath, Env, SecretEnv, Ingress, VPC
	// and DeletionProtection are as in ServiceArgs.
	Name                       pulumi.StringPtrInput
	ServiceAccountID           string
	ServiceAccountEmail        pulumi.StringInput
	Concurrency                int
	MinInstances, MaxInstances int
	CPU, Memory, HealthPath    string
	Env                        map[string]pulumi.StringInput
	SecretEnv                  map[string]SecretRef
	Ingress                    string
	VPC                        *VPCArgs
	DeletionProtection         bool
}

// ExistingService is a Cloud Run service deployed outside the consumer.
type ExistingService struct {
	// URL is the service's URL, the push endpoint. Required.
	URL pulumi.StringInput
	// Name and Location of the service: the push account is granted
	// run.invoker on it. Name is required unless InvokerGrantedElsewhere is
	// set; Location defaults to the consumer's Region, and one of them is
	// required with Name.
	Name, Location pulumi.StringInput
	// InvokerGrantedElsewhere says the push account already may invoke the
	// service; no grant is made.
	InvokerGrantedElsewhere bool
}

// ConsumerTTLArgs configure the Datastore backend (see TTLPolicyArgs).
type ConsumerTTLArgs struct {
	// Kind is the gateway's Datastore kind. Empty means DefaultKind.
	Kind string
	// Database is the database ID. Empty means DefaultDatabase.
	Database string
	// CreateDatabase, when set, creates Database in Datastore mode.
	CreateDatabase *DatabaseArgs
}

// ConsumerAlertsArgs configure the consumer's alert policies (see Alerts).
type ConsumerAlertsArgs struct {
	// Disabled creates no alert policies or log-based metrics.
	Disabled bool
	// NotificationChannels receive the alerts.
	NotificationChannels pulumi.StringArrayInput
}

// Consumer provisions a whole oncegate consumer from one plan: the project's
// APIs, the Pub/Sub service agent, the push identity, the source topic (or an
// existing one), the backend (Datastore database and TTL policy commands,
// Memorystore, or Cloud SQL wiring), the Cloud Run service (or an existing
// one), the push subscription with its dead-letter topic and IAM, and the
// alert policies. Every input is checked before anything is registered.
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
	// Audience is the push subscription's OIDC audience.
	Audience pulumi.StringOutput `pulumi:"audience"`
	// RuntimeServiceAccountEmail is the service's identity (empty for an
	// existing service).
	RuntimeServiceAccountEmail pulumi.StringOutput `pulumi:"runtimeServiceAccountEmail"`
	// Backend is the ONCEGATE_BACKEND value.
	Backend pulumi.StringOutput `pulumi:"backend"`
	// Database and Kind are where the Datastore backend keeps its records
	// (empty for other backends).
	Database pulumi.StringOutput `pulumi:"database"`
	Kind     pulumi.StringOutput `pulumi:"kind"`
	// TTLEnableCommand and TTLCheckCommand turn on and confirm the TTL
	// policy of the Datastore backend: run both after the first `pulumi up`
	// (docs/deploy.md). Empty for other backends.
	TTLEnableCommand pulumi.StringOutput `pulumi:"ttlEnableCommand"`
	TTLCheckCommand  pulumi.StringOutput `pulumi:"ttlCheckCommand"`
	// Plan is the resolved plan as its ONCEGATE_* variables.
	Plan pulumi.StringMapOutput `pulumi:"plan"`
}

// consumerSpec is ConsumerArgs checked: the children's arguments, each
// already validated.
type consumerSpec struct {
	plan      sizing.Plan
	namespace string
	push      *PushSubscriptionArgs
	svc       *ServiceArgs // nil for an existing service
	ttl       *TTLPolicyArgs
	services  []string
	horizon   time.Duration
}

// validate checks every input of the consumer and of its children, so that a
// refusal comes before the first resource is registered.
func (args *ConsumerArgs) validate(name string) (consumerSpec, error) {
	if args == nil || args.Project == nil {
		return consumerSpec{}, errors.New("consumer: Project is required")
	}
	fail := func(format string, a ...any) (consumerSpec, error) {
		return consumerSpec{}, fmt.Errorf("consumer %q: %s", name, fmt.Sprintf(format, a...))
	}
	sv := args.Service
	if sv.Existing == nil && (sv.Image == nil || args.Region == nil) {
		return fail("Service.Image and Region are required unless Service.Existing is set")
	}
	plan, err := resolvePlan(args.Plan)
	if err != nil {
		return consumerSpec{}, fmt.Errorf("consumer %q: %w", name, err)
	}
	s := consumerSpec{plan: plan, namespace: args.Namespace, horizon: plan.Horizon()}
	if s.namespace == "" {
		s.namespace = name
	}
	if err := validRegions("consumer "+name+": Topic.AllowedPersistenceRegions", args.Topic.AllowedPersistenceRegions); err != nil {
		return consumerSpec{}, err
	}
	datastore := sv.Backend.Redis == nil && sv.Backend.SQL == nil
	if ex := sv.Existing; ex != nil {
		if ex.URL == nil {
			return fail("Service.Existing.URL is required")
		}
		if sv.Image != nil {
			return fail("Service.Image and Service.Existing exclude each other; an existing service runs its own image")
		}
		if ex.Name != nil && ex.Location == nil && args.Region == nil {
			return fail("Service.Existing.Location or Region is required with Service.Existing.Name (the invoker grant names the service's region)")
		}
	}
	s.push = &PushSubscriptionArgs{
		Project: args.Project, Topic: pulumi.String("validated"), Plan: args.Plan,
		Endpoint:           PushEndpointArgs{URL: pulumi.String("validated")},
		PushServiceAccount: args.Subscription.PushServiceAccount, DeadLetter: args.DeadLetter,
		Name: args.Subscription.Name, Filter: args.Subscription.Filter, KMSKeyName: args.KMSKeyName,
		AllowedPersistenceRegions: args.Topic.AllowedPersistenceRegions, Labels: args.Labels,
	}
	if ex := sv.Existing; ex != nil {
		s.push.Endpoint.InvokerGrantedElsewhere = ex.InvokerGrantedElsewhere
		if ex.Name != nil {
			s.push.Endpoint.ServiceName, s.push.Endpoint.ServiceLocation = ex.Name, pulumi.String("validated")
		}
	} else {
		s.push.Endpoint.ServiceName, s.push.Endpoint.ServiceLocation = pulumi.String("validated"), pulumi.String("validated")
		ds := sv.Backend
		ds.Datastore = DatastoreBackendArgs{Kind: args.TTLPolicy.Kind, Database: args.TTLPolicy.Database}
		s.svc = &ServiceArgs{
			Project: args.Project, Region: args.Region, Image: sv.Image, Plan: args.Plan, Namespace: s.namespace,
			Backend: ds, Name: sv.Name, ServiceAccountID: sv.ServiceAccountID, ServiceAccountEmail: sv.ServiceAccountEmail,
			Concurrency: sv.Concurrency, MinInstances: sv.MinInstances, MaxInstances: sv.MaxInstances,
			CPU: sv.CPU, Memory: sv.Memory, HealthPath: sv.HealthPath, Env: sv.Env, SecretEnv: sv.SecretEnv,
			Ingress: sv.Ingress, VPC: sv.VPC, KMSKeyName: args.KMSKeyName, DeletionProtection: sv.DeletionProtection,
			Labels: args.Labels,
			OIDC:   OIDCArgs{Audience: pulumi.String("validated"), ServiceAccountEmail: pulumi.String("validated")},
		}
		if _, err := s.svc.validate(name + "-service"); err != nil {
			return consumerSpec{}, fmt.Errorf("consumer %q: %w", name, err)
		}
	}
	if _, err := s.push.validate(name + "-push"); err != nil {
		return consumerSpec{}, fmt.Errorf("consumer %q: %w", name, err)
	}
	if datastore {
		s.ttl = &TTLPolicyArgs{Project: args.Project, Kind: args.TTLPolicy.Kind, Database: args.TTLPolicy.Database, CreateDatabase: args.TTLPolicy.CreateDatabase}
		if _, err := s.ttl.validate(name + "-ttl"); err != nil {
			return consumerSpec{}, fmt.Errorf("consumer %q: %w", name, err)
		}
	} else if args.TTLPolicy.CreateDatabase != nil {
		return fail("TTLPolicy.CreateDatabase is for the Datastore backend; remove it with Redis or SQL")
	}
	s.services = consumerServices(args, datastore)
	return s, nil
}

// consumerServices lists the APIs the consumer's resources use.
func consumerServices(args *ConsumerArgs, datastore bool) []string {
	list := []string{"iam.googleapis.com", "pubsub.googleapis.com", "run.googleapis.com"}
	b := args.Service.Backend
	secrets := len(args.Service.SecretEnv) > 0
	switch {
	case datastore:
		list = append(list, "firestore.googleapis.com", "datastore.googleapis.com")
	case b.Redis != nil:
		list = append(list, "redis.googleapis.com", "compute.googleapis.com")
		secrets = true
	case b.SQL != nil:
		list = append(list, "sqladmin.googleapis.com")
		secrets = true
	}
	if secrets {
		list = append(list, "secretmanager.googleapis.com")
	}
	if args.KMSKeyName != nil {
		list = append(list, "cloudkms.googleapis.com")
	}
	if !args.Alerts.Disabled {
		list = append(list, "monitoring.googleapis.com", "logging.googleapis.com")
	}
	return slices.Compact(list)
}

// NewConsumer registers a Consumer component named name. Any input the
// consumer or one of its children would refuse — an unsafe plan, a missing
// required argument, a bad retention, account ID, ingress setting, secret
// reference or existing-service field — returns an error before anything is
// registered.
func NewConsumer(ctx *pulumi.Context, name string, args *ConsumerArgs, opts ...pulumi.ResourceOption) (*Consumer, error) {
	spec, err := args.validate(name)
	if err != nil {
		return nil, err
	}
	c := &Consumer{}
	if err := ctx.RegisterComponentResource(typeConsumer, name, c, opts...); err != nil {
		return nil, err
	}
	parent := pulumi.Parent(c)
	var deps []pulumi.Resource
	if !args.SkipServices {
		apis, err := NewProjectServices(ctx, name+"-apis", &ProjectServicesArgs{Project: args.Project, Services: spec.services}, parent)
		if err != nil {
			return nil, err
		}
		deps = apis.Resources
	}
	after := pulumi.Composite(parent, pulumi.DependsOn(deps))
	wrap := func(what string, err error) error { return fmt.Errorf("consumer %q: %s: %w", name, what, err) }

	agent, err := pubsubAgent(ctx, name+"-pubsub-agent", args.Project, after)
	if err != nil {
		return nil, wrap("pub/sub service agent", err)
	}
	// The push identity comes first: the service's runtime checks it.
	pushEmail := args.Subscription.PushServiceAccount.Email
	if pushEmail == nil {
		id := args.Subscription.PushServiceAccount.AccountID
		if id == "" {
			id = accountID(name, "push")
		}
		sa, err := serviceaccount.NewAccount(ctx, name+"-push-sa", &serviceaccount.AccountArgs{
			Project:     args.Project,
			AccountId:   pulumi.String(id),
			DisplayName: pulumi.String("oncegate push (" + name + ")"),
		}, after)
		if err != nil {
			return nil, wrap("push account", err)
		}
		pushEmail = sa.Email
	}

	topic := args.Topic.Existing
	if topic == nil {
		ta := &pubsub.TopicArgs{Project: args.Project, Name: args.Topic.Name, Labels: args.Labels}
		topicOpts := []pulumi.ResourceOption{after}
		if args.KMSKeyName != nil {
			g, err := kmsGrant(ctx, name+"-topic-kms", args.KMSKeyName, agent.Member, after)
			if err != nil {
				return nil, wrap("topic key", err)
			}
			ta.KmsKeyName = args.KMSKeyName
			topicOpts = append(topicOpts, pulumi.DependsOn([]pulumi.Resource{g}))
		}
		if len(args.Topic.AllowedPersistenceRegions) > 0 {
			ta.MessageStoragePolicy = storagePolicy(args.Topic.AllowedPersistenceRegions)
		}
		t, err := pubsub.NewTopic(ctx, name+"-topic", ta, topicOpts...)
		if err != nil {
			return nil, wrap("topic", err)
		}
		topic = t.Name
	}

	c.Backend = tie(c, pulumi.String("datastore"))
	c.Database, c.Kind = tie(c, pulumi.String("")), tie(c, pulumi.String(""))
	c.TTLEnableCommand, c.TTLCheckCommand = tie(c, pulumi.String("")), tie(c, pulumi.String(""))
	svcDeps := append([]pulumi.Resource{}, deps...)
	if spec.ttl != nil {
		spec.ttl.DependsOn = deps
		ttl, err := NewTTLPolicy(ctx, name+"-ttl", spec.ttl, parent)
		if err != nil {
			return nil, err
		}
		// The gateway should not serve before its database exists.
		svcDeps = append(svcDeps, ttl.Resources...)
		c.Database, c.Kind = ttl.Database, ttl.Kind
		c.TTLEnableCommand, c.TTLCheckCommand = ttl.EnableCommand, ttl.CheckCommand
	}

	push := spec.push
	push.Topic, push.ServiceAgentEmail, push.DependsOn = topic, agent.Email, deps
	push.PushServiceAccount = PushServiceAccountArgs{Email: pushEmail}
	runtimeEmail := tie(c, pulumi.String(""))
	if ex := args.Service.Existing; ex != nil {
		push.Endpoint = PushEndpointArgs{URL: ex.URL, Audience: args.Subscription.Audience, InvokerGrantedElsewhere: ex.InvokerGrantedElsewhere}
		if ex.Name != nil {
			push.Endpoint.ServiceName, push.Endpoint.ServiceLocation = ex.Name, ex.Location
			if ex.Location == nil {
				push.Endpoint.ServiceLocation = args.Region
			}
		}
	} else {
		audience := args.Subscription.Audience
		if audience == nil {
			audience = pulumi.Sprintf("oncegate/%s/%s", args.Project, name)
		}
		sa := spec.svc
		sa.OIDC = OIDCArgs{Audience: audience, ServiceAccountEmail: pushEmail}
		sa.DependsOn = svcDeps
		svc, err := NewService(ctx, name+"-service", sa, parent)
		if err != nil {
			return nil, err
		}
		push.Endpoint = PushEndpointArgs{URL: svc.URL, Audience: audience, ServiceName: svc.ServiceName, ServiceLocation: svc.Location, Service: svc.Run}
		runtimeEmail = svc.ServiceAccountEmail
		switch {
		case sa.Backend.Redis != nil:
			c.Backend = tie(c, pulumi.String("redis"))
		case sa.Backend.SQL != nil:
			c.Backend = tie(c, pulumi.String("sql"))
		}
	}
	sub, err := NewPushSubscription(ctx, name+"-push", push, parent)
	if err != nil {
		return nil, err
	}
	if !args.Alerts.Disabled {
		if _, err := NewAlerts(ctx, name+"-alerts", &AlertsArgs{
			Project: args.Project, SubscriptionName: sub.SubscriptionName, DeadLetterSubscriptionName: sub.DeadLetterSubscriptionName,
			ServiceName: push.Endpoint.ServiceName, Horizon: spec.horizon,
			NotificationChannels: args.Alerts.NotificationChannels, DependsOn: deps,
		}, parent); err != nil {
			return nil, err
		}
	}

	c.TopicName = tie(c, topic)
	c.SubscriptionName = sub.SubscriptionName
	c.DeadLetterTopicName = sub.DeadLetterTopicName
	c.DeadLetterSubscriptionName = sub.DeadLetterSubscriptionName
	c.ServiceURL = tie(c, push.Endpoint.URL)
	c.ServiceName = tie(c, pulumi.String(""))
	if push.Endpoint.ServiceName != nil {
		c.ServiceName = tie(c, push.Endpoint.ServiceName)
	}
	c.PushServiceAccountEmail = sub.PushServiceAccountEmail
	c.Audience = sub.Audience
	c.RuntimeServiceAccountEmail = runtimeEmail
	c.Plan = tieMap(c, spec.plan.Env())
	if err := ctx.RegisterResourceOutputs(c, pulumi.Map{
		"topicName": c.TopicName, "subscriptionName": c.SubscriptionName,
		"deadLetterTopicName": c.DeadLetterTopicName, "deadLetterSubscriptionName": c.DeadLetterSubscriptionName,
		"serviceUrl": c.ServiceURL, "serviceName": c.ServiceName, "pushServiceAccountEmail": c.PushServiceAccountEmail,
		"audience": c.Audience, "runtimeServiceAccountEmail": c.RuntimeServiceAccountEmail, "backend": c.Backend,
		"database": c.Database, "kind": c.Kind, "ttlEnableCommand": c.TTLEnableCommand, "ttlCheckCommand": c.TTLCheckCommand,
		"plan": c.Plan,
	}); err != nil {
		return nil, err
	}
	return c, nil
}
