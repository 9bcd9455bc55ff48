package stack

import (
	"github.com/oncegate/oncegate/components"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
)

// Program deploys one consumer from the stack configuration and exports its
// names, URL and plan. A malformed configuration value or an unsafe plan
// fails the preview with one line per problem.
func Program(ctx *pulumi.Context) error {
	cfg, gcp := config.New(ctx, "oncegate"), config.New(ctx, "gcp")
	s, err := readSettings(
		func(k string) string { return cfg.Get(k) },
		func(k string) string { return gcp.Get(k) },
	)
	if err != nil {
		return err
	}
	c, err := components.NewConsumer(ctx, s.name, s.args)
	if err != nil {
		return err
	}
	ctx.Export("topic", c.TopicName)
	ctx.Export("subscription", c.SubscriptionName)
	ctx.Export("deadLetterTopic", c.DeadLetterTopicName)
	ctx.Export("deadLetterSubscription", c.DeadLetterSubscriptionName)
	ctx.Export("serviceUrl", c.ServiceURL)
	ctx.Export("serviceName", c.ServiceName)
	ctx.Export("pushServiceAccount", c.PushServiceAccountEmail)
	ctx.Export("audience", c.Audience)
	ctx.Export("runtimeServiceAccount", c.RuntimeServiceAccountEmail)
	ctx.Export("backend", c.Backend)
	// Run these two after the first `pulumi up` (docs/deploy.md): no Pulumi
	// resource can turn on a TTL policy in Datastore mode.
	ctx.Export("ttlEnableCommand", c.TTLEnableCommand)
	ctx.Export("ttlCheckCommand", c.TTLCheckCommand)
	ctx.Export("database", c.Database)
	ctx.Export("kind", c.Kind)
	ctx.Export("plan", c.Plan)
	return nil
}
