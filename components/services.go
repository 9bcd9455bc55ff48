package components

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/projects"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// DefaultServices are the APIs a Datastore-backed consumer needs: IAM
// (service accounts), Pub/Sub, Cloud Run, and Firestore and Datastore (the
// database, its TTL policy and the gateway's reads and writes). Consumer adds
// those of the other backends, Secret Manager, Cloud KMS and Cloud Monitoring
// as its configuration uses them.
var DefaultServices = []string{
	"iam.googleapis.com",
	"pubsub.googleapis.com",
	"run.googleapis.com",
	"firestore.googleapis.com",
	"datastore.googleapis.com",
}

// ProjectServicesArgs configure ProjectServices.
type ProjectServicesArgs struct {
	// Project is the project ID. Required.
	Project pulumi.StringInput
	// Services lists the APIs to enable. Nil means DefaultServices.
	Services []string
}

// ProjectServices enables APIs on a project. Destroying it leaves them
// enabled, since other workloads may use them.
type ProjectServices struct {
	pulumi.ResourceState

	// Services are the enabled API names.
	Services pulumi.StringArrayOutput `pulumi:"services"`
	// Resources are the projects.Service children, for pulumi.DependsOn.
	Resources []pulumi.Resource
}

// NewProjectServices registers a ProjectServices component named name. It
// returns an error when Project is missing or a service name is empty.
func NewProjectServices(ctx *pulumi.Context, name string, args *ProjectServicesArgs, opts ...pulumi.ResourceOption) (*ProjectServices, error) {
	if args == nil || args.Project == nil {
		return nil, errors.New("project services: Project is required")
	}
	list := args.Services
	if list == nil {
		list = DefaultServices
	}
	for _, svc := range list {
		if short, _, _ := strings.Cut(svc, "."); short == "" {
			return nil, fmt.Errorf("project services %q: empty service name in %q", name, list)
		}
	}
	c := &ProjectServices{}
	if err := ctx.RegisterComponentResource(typeProjectServices, name, c, opts...); err != nil {
		return nil, err
	}
	var names pulumi.StringArray
	for _, svc := range list {
		short, _, _ := strings.Cut(svc, ".")
		r, err := projects.NewService(ctx, name+"-"+short, &projects.ServiceArgs{
			Project:                  args.Project,
			Service:                  pulumi.String(svc),
			DisableOnDestroy:         pulumi.Bool(false),
			DisableDependentServices: pulumi.Bool(false),
		}, pulumi.Parent(c))
		if err != nil {
			return nil, fmt.Errorf("project services %q: %s: %w", name, svc, err)
		}
		c.Resources = append(c.Resources, r)
		names = append(names, r.Service)
	}
	c.Services = names.ToStringArrayOutput()
	if err := ctx.RegisterResourceOutputs(c, pulumi.Map{"services": c.Services}); err != nil {
		return nil, err
	}
	return c, nil
}
