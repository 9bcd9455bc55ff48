// Package pullenv configures a pull worker (runtime/pull) from the
// environment: gateenv's contract plus the ONCEGATE_PULL_* variables. It is
// apart from gateenv so that a push-only program, which imports gateenv and a
// backend package (gateenv/redisenv, ...), links no Pub/Sub client package;
// a pull worker imports pullenv, and the backend package it runs on, as the
// push program does:
//
//	import (
//		"github.com/oncegate/oncegate/runtime/gateenv/pullenv"
//		_ "github.com/oncegate/oncegate/runtime/gateenv/redisenv"
//	)
//
//	cfg, err := pullenv.New(ctx, nil)
package pullenv

import (
	"context"

	"cloud.google.com/go/pubsub/v2"

	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/gateenv/internal/pullhook"
	"github.com/oncegate/oncegate/runtime/pull"
	"github.com/oncegate/oncegate/sizing"
)

// Config is the runtime of a pull worker: gateenv's Config plus the pull plan.
type Config struct {
	*gateenv.Config
	// Pull is the validated pull plan, defaults applied. Config.Plan is its
	// Plan, and Config.Gate's StoreTimeout is its StoreTimeout.
	Pull sizing.PullPlan
	// Subscription is ONCEGATE_PULL_SUBSCRIPTION (gateenv.EnvPullSubscription).
	Subscription string
}

// New is gateenv.New for a pull worker: the plan is read with
// sizing.PullFromEnv (the variables of sizing.EnvNames and
// sizing.PullEnvNames) and checked with pull's rules, so an unsafe combination
// (flow control past the backend's connections, an extension shorter than the
// time budget, a drain past the shutdown grace, a TTL under the redelivery
// horizon) stops start-up with one line naming each variable and the fix
// (matching sizing.ErrUnsafePlan). ONCEGATE_PULL_SUBSCRIPTION is required.
// ONCEGATE_DISABLED=1 is refused: pull has no pass-through mode. The push OIDC
// variables are neither read nor required (Options.NoPush is implied): a pull
// worker serves no push request, and the result's OIDC is nil. opts may be
// nil (defaults); the backends offered are gateenv.Backends() unless
// opts.Backends says otherwise. Call Close when done.
func New(ctx context.Context, opts *gateenv.Options) (*Config, error) {
	c, pp, sub, err := pullhook.New(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &Config{Config: c.(*gateenv.Config), Pull: pp, Subscription: sub}, nil
}

// ReceiveSettings returns the client settings the pull plan sized
// (pull.ReceiveSettings); assign them to Subscriber.ReceiveSettings.
func (c *Config) ReceiveSettings() pubsub.ReceiveSettings { return pull.ReceiveSettings(c.Pull) }

// PullOptions returns the Receiver options the plan implies (drain, ack
// timeout) with the configured logger; set Mode, KeyFunc and the rest on the
// result.
func (c *Config) PullOptions() *pull.Options {
	o := pull.OptionsFor(c.Pull)
	o.Logger = c.Gate.Logger
	return o
}
