package components_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/oncegate/oncegate/components"
	"github.com/oncegate/oncegate/sizing"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// echo is the smallest useful mock: resources echo their inputs (the
// components make no provider calls).
type echo struct{}

func (echo) NewResource(a pulumi.MockResourceArgs) (string, resource.PropertyMap, error) {
	outs := a.Inputs.Copy()
	if a.TypeToken == "gcp:serviceaccount/account:Account" {
		outs["email"] = resource.NewProperty(a.Inputs["accountId"].StringValue() + "@acme.iam.gserviceaccount.com")
	}
	return a.Name + "-id", outs, nil
}

func (echo) Call(a pulumi.MockCallArgs) (resource.PropertyMap, error) { return a.Args, nil }

func ExampleNewConsumer() {
	deploy := func(p sizing.Plan) error {
		return pulumi.RunErr(func(ctx *pulumi.Context) error {
			_, err := components.NewConsumer(ctx, "orders", &components.ConsumerArgs{
				Project: pulumi.String("acme"),
				Region:  pulumi.String("europe-west1"),
				Plan:    p,
				Service: components.ConsumerServiceArgs{Image: pulumi.String("europe-docker.pkg.dev/acme/oncegate/worker:v1")},
			})
			return err
		}, pulumi.WithMocks("oncegate", "dev", echo{}))
	}

	// A renewed one-minute lease: safe.
	fmt.Println(deploy(sizing.Plan{Lease: time.Minute, Heartbeat: 20 * time.Second, WorkDeadline: time.Minute}))

	// An unrenewed lease no longer than the work: refused at preview.
	err := deploy(sizing.Plan{Lease: time.Minute, WorkDeadline: time.Minute})
	fmt.Println(err.Error()[strings.Index(err.Error(), "consumer"):])
	// Output:
	// <nil>
	// consumer "orders": sizing: Lease 1m must exceed the work deadline 1m when no heartbeat renews it (invariant 1); raise the lease above 1m or set a heartbeat of at most a third of the lease
}
