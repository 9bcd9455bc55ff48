package gateenv

import (
	"context"
	"errors"
	"maps"
	"os"
	"strings"

	"cloud.google.com/go/pubsub/v2"

	"github.com/oncegate/oncegate/runtime/pull"
	"github.com/oncegate/oncegate/sizing"
)

// EnvPullSubscription names the subscription a pull worker receives from: its
// id, or the full "projects/<p>/subscriptions/<s>" name.
const EnvPullSubscription = "ONCEGATE_PULL_SUBSCRIPTION"

// pullVars maps the PullPlan fields to the variables that set them, for the
// unsafe-plan message.
var pullVars = map[string]string{
	"MaxExtension":       sizing.EnvPullMaxExtension,
	"MaxExtensionPeriod": sizing.EnvPullMaxExtensionPeriod, "MaxOutstandingMessages": sizing.EnvPullMaxOutstanding,
	"BackendConnections": sizing.EnvPullBackendConns, "Drain": sizing.EnvPullDrain,
}

func init() { maps.Copy(planVars, pullVars) }

// PullConfig is the runtime of a pull worker: Config plus the pull plan.
type PullConfig struct {
	*Config
	// Pull is the validated pull plan, defaults applied. Config.Plan is its
	// Plan, and Config.Gate's StoreTimeout is its StoreTimeout.
	Pull sizing.PullPlan
	// Subscription is ONCEGATE_PULL_SUBSCRIPTION.
	Subscription string
}

// NewPull is New for a pull worker: the plan is read with sizing.PullFromEnv
// (the variables of sizing.EnvNames and sizing.PullEnvNames) and checked with
// pull's rules, so an unsafe combination (flow control past the backend's
// connections, an extension shorter than the time budget, a drain past the
// shutdown grace, a TTL under the redelivery horizon) stops start-up with one
// line naming each variable and the fix (matching sizing.ErrUnsafePlan).
// ONCEGATE_PULL_SUBSCRIPTION is required. ONCEGATE_DISABLED=1 is refused: pull
// has no pass-through mode. The push OIDC variables are neither read nor
// required (Options.NoPush is implied): a pull worker serves no push request,
// and the result's OIDC is nil.
func NewPull(ctx context.Context, opts *Options) (*PullConfig, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	o.NoPush = true // a pull worker answers no push request: no OIDC variables
	var pp sizing.PullPlan
	o.readPlan = func(get func(string) string) (sizing.Plan, error) {
		var err error
		pp, err = sizing.PullFromEnv(get)
		return pp.Plan, err
	}
	var errs []error
	if on, _ := parseDisabled(strings.TrimSpace(getenv(EnvDisabled))); on {
		errs = append(errs, &sizing.EnvError{Var: EnvDisabled, Value: getenv(EnvDisabled), Want: "0 or unset (pull workers have no pass-through mode)", Err: errors.New("not supported for pull")})
	}
	sub := strings.TrimSpace(getenv(EnvPullSubscription))
	if sub == "" {
		errs = append(errs, &sizing.EnvError{Var: EnvPullSubscription, Want: "a subscription id or projects/<project>/subscriptions/<id>"})
	}
	if len(errs) > 0 {
		var pe *sizing.PlanError
		switch _, err := sizing.PullFromEnv(getenv); {
		case errors.As(err, &pe):
			errs = append(errs, unsafePlan{pe})
		case err != nil:
			errs = append(errs, err)
		}
		return nil, joinEnv(errs)
	}
	c, err := New(ctx, &o)
	if err != nil {
		return nil, err
	}
	c.Gate.StoreTimeout = pp.StoreTimeout
	return &PullConfig{Config: c, Pull: pp, Subscription: sub}, nil
}

// ReceiveSettings returns the client settings the pull plan sized
// (pull.ReceiveSettings); assign them to Subscriber.ReceiveSettings.
func (c *PullConfig) ReceiveSettings() pubsub.ReceiveSettings { return pull.ReceiveSettings(c.Pull) }

// PullOptions returns the Receiver options the plan implies (drain, ack
// timeout) with the configured logger; set Mode, KeyFunc and the rest on the
// result.
func (c *PullConfig) PullOptions() *pull.Options {
	o := pull.OptionsFor(c.Pull)
	o.Logger = c.Gate.Logger
	return o
}
