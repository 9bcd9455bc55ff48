package gateenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/sizing"
)

// NewAdmin opens the backend for an operator's tool (inspect, resolve, purge,
// advance-fence): it reads only ONCEGATE_BACKEND, ONCEGATE_NAMESPACE (optional:
// empty means keys are given as stored), the backend's own variables
// (ONCEGATE_SQL_DSN, ONCEGATE_REDIS_ADDR, GOOGLE_CLOUD_PROJECT, …) and
// ONCEGATE_TTL when set. The sizing plan is neither read nor validated: the
// returned Config's Plan is zero except TTL (ONCEGATE_TTL, else gate.DefaultTTL,
// 48 h), which a resolve or an advanced fence keeps the record for: the gate's
// own default, not sizing.DefaultTTL (1 h), which is a floor for derived plans
// and would let a resolved record expire before Pub/Sub stops redelivering.
// Set ONCEGATE_TTL to the service's TTL (its start-up log line's ttl) when that
// is longer.
// Its Logger (default: discard) gets one info line naming backend and
// namespace. Errors name the variable and the accepted form, as New's do.
// Call Close when done.
func NewAdmin(ctx context.Context, opts *Options) (*Config, error) {
	o := opts.withDefaults(slog.New(slog.NewTextHandler(io.Discard, nil)))
	get := func(name string) string { return strings.TrimSpace(o.Getenv(name)) }
	var errs []error
	ns, err := parseNamespace(get(EnvNamespace), false)
	if err != nil {
		errs = append(errs, err)
	}
	name := get(EnvBackend)
	open := o.Backends[name]
	if open == nil { // absent, or taken out of a copy of Backends() with nil
		errs = append(errs, backendError(name, o.Backends))
	}
	ttl := gate.DefaultTTL
	if v := get(sizing.EnvTTL); v != "" {
		d, err := time.ParseDuration(v)
		if err == nil && d <= 0 {
			err = errors.New("not positive")
		}
		if err != nil {
			errs = append(errs, &sizing.EnvError{Var: sizing.EnvTTL, Value: v, Want: "a positive Go duration such as 24h", Err: err})
		}
		ttl = d
	}
	if len(errs) > 0 {
		return nil, joinEnv(errs)
	}
	b, closeFn, err := openBackend(ctx, name, open, o.Getenv)
	if err != nil {
		return nil, err
	}
	o.Logger.Info("oncegate: opened the backend for an admin command", "backend", name, "namespace", ns)
	return &Config{BackendName: name, Backend: b, Plan: sizing.Plan{TTL: ttl}, close: closeFn,
		Gate: gate.Options{Namespace: ns, TTL: ttl, Logger: o.Logger}}, nil
}

// withDefaults returns *o (or zero options) with Getenv, Backends and Logger
// defaulted; logger is the default logger.
func (o *Options) withDefaults(logger *slog.Logger) Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.Getenv == nil {
		out.Getenv = os.Getenv
	}
	if out.Backends == nil {
		out.Backends = Backends()
	}
	if out.Logger == nil {
		out.Logger = logger
	}
	return out
}

// openBackend opens backend name; a nil close func becomes a no-op.
func openBackend(ctx context.Context, name string, open Opener, getenv func(string) string) (gate.Backend, func() error, error) {
	b, closeFn, err := open(ctx, getenv)
	if err != nil {
		return nil, nil, fmt.Errorf("gateenv: %s backend: %w", name, err)
	}
	if closeFn == nil {
		closeFn = func() error { return nil }
	}
	return b, closeFn, nil
}
