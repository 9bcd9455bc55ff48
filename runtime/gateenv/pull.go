package gateenv

import (
	"context"
	"errors"
	"maps"
	"os"
	"strings"

	"github.com/oncegate/oncegate/runtime/gateenv/internal/pullhook"
	"github.com/oncegate/oncegate/sizing"
)

// EnvPullSubscription names the subscription a pull worker receives from: its
// id, or the full "projects/<p>/subscriptions/<s>" name. Read by
// gateenv/pullenv.New.
const EnvPullSubscription = "ONCEGATE_PULL_SUBSCRIPTION"

// pullVars maps the PullPlan fields to the variables that set them, for the
// unsafe-plan message.
var pullVars = map[string]string{
	"MaxExtension":       sizing.EnvPullMaxExtension,
	"MaxExtensionPeriod": sizing.EnvPullMaxExtensionPeriod, "MaxOutstandingMessages": sizing.EnvPullMaxOutstanding,
	"BackendConnections": sizing.EnvPullBackendConns, "Drain": sizing.EnvPullDrain,
}

func init() {
	maps.Copy(planVars, pullVars)
	pullhook.New = func(ctx context.Context, opts any) (any, sizing.PullPlan, string, error) {
		o, _ := opts.(*Options)
		c, pp, sub, err := newPull(ctx, o)
		if err != nil {
			return nil, pp, sub, err
		}
		return c, pp, sub, nil
	}
}

// newPull is New for a pull worker, the core of gateenv/pullenv.New (which
// documents the contract). It stays here, free of the Pub/Sub client, because
// it needs New's plan hook and error formatting.
func newPull(ctx context.Context, opts *Options) (*Config, sizing.PullPlan, string, error) {
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
		return nil, sizing.PullPlan{}, "", joinEnv(errs)
	}
	c, err := New(ctx, &o)
	if err != nil {
		return nil, sizing.PullPlan{}, "", err
	}
	c.Gate.StoreTimeout = pp.StoreTimeout
	return c, pp, sub, nil
}
