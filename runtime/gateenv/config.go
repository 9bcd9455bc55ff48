package gateenv

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/push"
	"github.com/oncegate/oncegate/sizing"
)

// Variables of the configuration contract besides the plan's (sizing.EnvNames).
const (
	EnvBackend           = "ONCEGATE_BACKEND"
	EnvNamespace         = "ONCEGATE_NAMESPACE"
	EnvDisabled          = "ONCEGATE_DISABLED"
	EnvSQLDSN            = "ONCEGATE_SQL_DSN"
	EnvRedisAddr         = "ONCEGATE_REDIS_ADDR"
	EnvDatastoreKind     = "ONCEGATE_DATASTORE_KIND"
	EnvDatastoreDatabase = "ONCEGATE_DATASTORE_DATABASE"
	EnvProject           = "GOOGLE_CLOUD_PROJECT"
)

// Options configure New. The zero value (or nil) means defaults.
type Options struct {
	// Getenv reads a variable. Default os.Getenv.
	Getenv func(string) string
	// Backends maps ONCEGATE_BACKEND values to openers; a name whose opener is
	// nil is not offered. Default Backends().
	Backends map[string]Opener
	// Logger goes into the gate options and receives one info line describing
	// the configuration. Default slog.Default().
	Logger *slog.Logger
	// OIDCValidator checks push tokens' signatures. Nil means an
	// *idtoken.Validator over Google's published certificates; tests pass one
	// over a local key set.
	OIDCValidator push.TokenValidator
	// NoPush says the program serves no push requests (an admin tool): the OIDC
	// variables are neither read nor required.
	NoPush bool
	// readPlan reads the plan; default sizing.FromEnv (pullenv.New reads the pull
	// plan).
	readPlan func(getenv func(string) string) (sizing.Plan, error)
}

// Config is the runtime the environment describes.
type Config struct {
	// BackendName is the ONCEGATE_BACKEND value.
	BackendName string
	// Backend is the opened backend. When Disabled it is an unused memgate store.
	Backend gate.Backend
	// Gate holds the namespace, lease, ttl, heartbeat, work deadline, store
	// timeout and logger.
	Gate gate.Options
	// Plan is the validated sizing plan, defaults applied (zero when Disabled).
	Plan sizing.Plan
	// Disabled is ONCEGATE_DISABLED=1: the adapters run every delivery unguarded.
	Disabled bool
	// OIDC verifies every push's token before any claim
	// (ONCEGATE_OIDC_AUDIENCE, ONCEGATE_OIDC_SERVICE_ACCOUNT); nil only with
	// ONCEGATE_OIDC_DISABLED=1 or Options.NoPush. Serve enforces it; a program
	// serving otherwise must pass it on (AdapterOptions, or push.RequireOIDC).
	OIDC  *push.OIDCConfig
	close func() error
}

// New reads the environment, validates it and opens the backend. It returns an
// error naming each missing or malformed variable with its accepted form (they
// unwrap to *sizing.EnvError), one matching sizing.ErrUnsafePlan when the plan
// is unsafe, or the backend's error when it cannot be opened. Push token
// verification is required: ONCEGATE_OIDC_AUDIENCE and
// ONCEGATE_OIDC_SERVICE_ACCOUNT, or ONCEGATE_OIDC_DISABLED=1 for a local run
// (not read with Options.NoPush). With ONCEGATE_DISABLED=1 only those and
// ONCEGATE_NAMESPACE (optional then) are read and no backend is opened. Call
// Close when done.
func New(ctx context.Context, opts *Options) (*Config, error) {
	o := opts.withDefaults(slog.Default())
	get := func(name string) string { return strings.TrimSpace(o.Getenv(name)) }
	var errs []error
	disabled, err := parseDisabled(get(EnvDisabled))
	if err != nil {
		errs = append(errs, err)
	}
	ns, err := parseNamespace(get(EnvNamespace), !disabled)
	if err != nil {
		errs = append(errs, err)
	}
	var oidc *push.OIDCConfig
	if !o.NoPush {
		var oerrs []error
		oidc, oerrs = parseOIDC(get, o.OIDCValidator)
		errs = append(errs, oerrs...)
	}
	if disabled {
		if len(errs) > 0 {
			return nil, joinEnv(errs)
		}
		return &Config{BackendName: "memory", Backend: memgate.New(nil), Disabled: true, OIDC: oidc,
			Gate: gate.Options{Namespace: ns, Logger: o.Logger}}, nil
	}
	name := get(EnvBackend)
	open := o.Backends[name]
	if open == nil { // absent, or taken out of a copy of Backends() with nil
		errs = append(errs, backendError(name, o.Backends))
	}
	if o.readPlan == nil {
		o.readPlan = sizing.FromEnv
	}
	plan, err := o.readPlan(o.Getenv)
	var pe *sizing.PlanError
	switch {
	case errors.As(err, &pe):
		errs = append(errs, unsafePlan{pe})
	case err != nil:
		errs = append(errs, err)
	default:
		errs = append(errs, checkFloors(plan)...)
	}
	if len(errs) > 0 {
		return nil, joinEnv(errs)
	}
	b, closeFn, err := openBackend(ctx, name, open, o.Getenv)
	if err != nil {
		return nil, err
	}
	c := &Config{BackendName: name, Backend: b, Plan: plan, close: closeFn, OIDC: oidc, Gate: gate.Options{
		Namespace: ns, Lease: plan.Lease, TTL: plan.TTL, Heartbeat: plan.Heartbeat,
		WorkDeadline: plan.WorkDeadline, StoreTimeout: plan.StoreTimeout, Logger: o.Logger,
	}}
	o.Logger.Info("oncegate: configured from the environment", "backend", name, "namespace", ns,
		"lease", plan.Lease, "ttl", plan.TTL, "heartbeat", plan.Heartbeat, "work_deadline", plan.WorkDeadline,
		"store_timeout", plan.StoreTimeout, "max_delivery_attempts", plan.MaxDeliveryAttempts, "oidc_required", oidc != nil)
	return c, nil
}

// NewGate returns a Gate over the configured backend and options.
func (c *Config) NewGate() (*gate.Gate, error) {
	o := c.Gate
	return gate.New(c.Backend, &o)
}

// AdapterOptions returns the adapter options the environment implies
// (Disabled, OIDC and Logger), for every adapter: embed them in push.Options
// or cloudevent.Options (cloudevent.Options{AdapterOptions:
// cfg.AdapterOptions()}) and set Mode and the rest on the result.
func (c *Config) AdapterOptions() push.AdapterOptions {
	return push.AdapterOptions{Disabled: c.Disabled, OIDC: c.OIDC, Logger: c.Gate.Logger}
}

// PushOptions returns push handler options holding AdapterOptions; set
// KeyFunc, Mode and the rest on the result.
func (c *Config) PushOptions() *push.Options {
	return &push.Options{AdapterOptions: c.AdapterOptions()}
}

// Close releases the backend's client or pool. It is safe to call more than
// once.
func (c *Config) Close() error {
	if c.close == nil {
		return nil
	}
	f := c.close
	c.close = nil
	return f()
}

func parseDisabled(v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, &sizing.EnvError{Var: EnvDisabled, Value: v, Want: "1 (pass-through, handler unit tests only) or 0", Err: err}
	}
	return b, nil
}

// namespaceForm is what ONCEGATE_NAMESPACE accepts. A colon is refused because
// the gate joins namespace and key with one: "a:b"+"c" would equal "a"+"b:c".
const namespaceForm = "1–256 ASCII letters, digits and . _ - / (no colon)"

func parseNamespace(v string, required bool) (string, error) {
	if v == "" {
		if required {
			return "", &sizing.EnvError{Var: EnvNamespace, Want: namespaceForm}
		}
		return "", nil
	}
	ok := len(v) <= 256
	for _, r := range v {
		ok = ok && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/", r))
	}
	if !ok {
		return "", &sizing.EnvError{Var: EnvNamespace, Value: v, Want: namespaceForm, Err: errors.New("invalid namespace")}
	}
	return v, nil
}
