package components

import (
	"errors"
	"fmt"

	"github.com/oncegate/oncegate/sizing"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/cloudrunv2"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/projects"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/serviceaccount"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// ServiceArgs configure Service. Project, Region and Image are required.
type ServiceArgs struct {
	// Project is the project ID; it is also GOOGLE_CLOUD_PROJECT. Required.
	Project pulumi.StringInput
	// Region is the Cloud Run location, e.g. "europe-west1". Required.
	Region pulumi.StringInput
	// Image is the container image running the gateway. Required.
	Image pulumi.StringInput
	// Plan sets the request timeout and the ONCEGATE_* plan variables. It is
	// validated with sizing.Plan.Validate; an unsafe plan is an error.
	Plan sizing.Plan
	// Namespace is ONCEGATE_NAMESPACE. Empty means the component's name.
	Namespace string
	// Kind is ONCEGATE_DATASTORE_KIND. Empty means DefaultKind.
	Kind string
	// Database is the database ID. Empty means DefaultDatabase, which
	// ONCEGATE_DATASTORE_DATABASE carries as the empty string (the Datastore
	// API's name for the default database).
	Database string

	// Name is the Cloud Run service name. Nil means one derived from the
	// component's name.
	Name pulumi.StringPtrInput
	// ServiceAccountID is the runtime service account's ID. Empty means one
	// derived from the component's name ("<name>-run").
	ServiceAccountID string
	// Concurrency is the most requests an instance serves at once. Zero means
	// Cloud Run's default (80 with at least one CPU).
	Concurrency int
	// MinInstances and MaxInstances bound the instance count; zero leaves a
	// bound unset.
	MinInstances, MaxInstances int
	// Env holds extra variables, e.g. SUPPLIER_URL. It may not set a variable
	// of the configuration contract.
	Env map[string]pulumi.StringInput
	// Ingress is the ingress setting. Empty means "INGRESS_TRAFFIC_ALL":
	// Pub/Sub push requests come from outside the project's network; IAM
	// (run.invoker) admits only the push account.
	Ingress string
	// DeletionProtection keeps `pulumi destroy` from deleting the service.
	DeletionProtection bool
	// Labels are applied to the service.
	Labels pulumi.StringMapInput
	// DependsOn makes every child wait for these resources, e.g. the
	// ProjectServices that enable the APIs it uses.
	DependsOn []pulumi.Resource
}

// Service runs the gateway on Cloud Run v2 under a runtime service account
// granted roles/datastore.user, with the request timeout of the plan and the
// configuration contract of docs/design.md in its environment. It grants no
// invoker: PushSubscription grants run.invoker to its push account only.
type Service struct {
	pulumi.ResourceState

	// URL is the service's URL, the push endpoint and OIDC audience.
	URL pulumi.StringOutput `pulumi:"url"`
	// ServiceName is the Cloud Run service's name.
	ServiceName pulumi.StringOutput `pulumi:"serviceName"`
	// Location is the service's region.
	Location pulumi.StringOutput `pulumi:"location"`
	// ServiceAccountEmail is the runtime service account's email.
	ServiceAccountEmail pulumi.StringOutput `pulumi:"serviceAccountEmail"`
	// Plan is the resolved plan as its ONCEGATE_* variables.
	Plan pulumi.StringMapOutput `pulumi:"plan"`
}

// NewService registers a Service component named name. It returns an error,
// before registering anything, for a missing required argument, an unsafe
// plan (the sizing sentences) or an Env entry the contract owns.
func NewService(ctx *pulumi.Context, name string, args *ServiceArgs, opts ...pulumi.ResourceOption) (*Service, error) {
	if args == nil || args.Project == nil || args.Region == nil || args.Image == nil {
		return nil, errors.New("service: Project, Region and Image are required")
	}
	plan, err := resolvePlan(args.Plan)
	if err != nil {
		return nil, fmt.Errorf("service %q: %w", name, err)
	}
	c := contract{project: args.Project, namespace: args.Namespace, kind: args.Kind, database: args.Database, plan: plan}
	if c.namespace == "" {
		c.namespace = name
	}
	if c.kind == "" {
		c.kind = DefaultKind
	}
	if c.database == "" {
		c.database = DefaultDatabase
	}
	envs, err := c.envs(args.Env)
	if err != nil {
		return nil, fmt.Errorf("service %q: %w", name, err)
	}
	saID := args.ServiceAccountID
	if saID == "" {
		saID = accountID(name, "run")
	} else if err := validAccountID("service "+name+": ServiceAccountID", saID); err != nil {
		return nil, err
	}
	ingress := args.Ingress
	if ingress == "" {
		ingress = "INGRESS_TRAFFIC_ALL"
	}

	s := &Service{}
	if err := ctx.RegisterComponentResource(typeService, name, s, opts...); err != nil {
		return nil, err
	}
	parent := pulumi.Composite(pulumi.Parent(s), pulumi.DependsOn(args.DependsOn))
	sa, err := serviceaccount.NewAccount(ctx, name+"-run-sa", &serviceaccount.AccountArgs{
		Project:     args.Project,
		AccountId:   pulumi.String(saID),
		DisplayName: pulumi.String("oncegate runtime (" + name + ")"),
	}, parent)
	if err != nil {
		return nil, fmt.Errorf("service %q: runtime account: %w", name, err)
	}
	member := pulumi.Sprintf("serviceAccount:%s", sa.Email)
	grant, err := projects.NewIAMMember(ctx, name+"-datastore-user", &projects.IAMMemberArgs{
		Project: args.Project,
		Role:    pulumi.String(roleDatastore),
		Member:  member,
	}, parent)
	if err != nil {
		return nil, fmt.Errorf("service %q: datastore role: %w", name, err)
	}

	tmpl := &cloudrunv2.ServiceTemplateArgs{
		ServiceAccount: sa.Email,
		Timeout:        pulumi.String(googleDuration(plan.RequestTimeout)),
		Containers: cloudrunv2.ServiceTemplateContainerArray{&cloudrunv2.ServiceTemplateContainerArgs{
			Image: args.Image,
			Envs:  envs,
		}},
	}
	if args.Concurrency > 0 {
		tmpl.MaxInstanceRequestConcurrency = pulumi.Int(args.Concurrency)
	}
	if args.MinInstances > 0 || args.MaxInstances > 0 {
		sc := &cloudrunv2.ServiceTemplateScalingArgs{}
		if args.MinInstances > 0 {
			sc.MinInstanceCount = pulumi.Int(args.MinInstances)
		}
		if args.MaxInstances > 0 {
			sc.MaxInstanceCount = pulumi.Int(args.MaxInstances)
		}
		tmpl.Scaling = sc
	}
	svc, err := cloudrunv2.NewService(ctx, name+"-service", &cloudrunv2.ServiceArgs{
		Project:            args.Project,
		Location:           args.Region,
		Name:               args.Name,
		Ingress:            pulumi.String(ingress),
		InvokerIamDisabled: pulumi.Bool(false),
		DeletionProtection: pulumi.Bool(args.DeletionProtection),
		Labels:             args.Labels,
		Template:           tmpl,
	}, parent, pulumi.DependsOn([]pulumi.Resource{grant}))
	if err != nil {
		return nil, fmt.Errorf("service %q: cloud run: %w", name, err)
	}

	s.URL = svc.Uri
	s.ServiceName = svc.Name
	s.Location = svc.Location
	s.ServiceAccountEmail = sa.Email
	s.Plan = pulumi.ToStringMap(plan.Env()).ToStringMapOutput()
	if err := ctx.RegisterResourceOutputs(s, pulumi.Map{
		"url": s.URL, "serviceName": s.ServiceName, "location": s.Location,
		"serviceAccountEmail": s.ServiceAccountEmail, "plan": s.Plan,
	}); err != nil {
		return nil, err
	}
	return s, nil
}
