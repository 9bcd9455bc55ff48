package sizing

import (
	"errors"
	"maps"
	"strconv"
	"strings"
	"time"
)

// Environment variables of a PullPlan beyond the Plan's (EnvNames).
const (
	EnvPullMaxExtension       = "ONCEGATE_PULL_MAX_EXTENSION"
	EnvPullMaxExtensionPeriod = "ONCEGATE_PULL_MAX_EXTENSION_PERIOD"
	EnvPullMaxOutstanding     = "ONCEGATE_PULL_MAX_OUTSTANDING"
	EnvPullBackendConns       = "ONCEGATE_PULL_BACKEND_CONNS"
	EnvPullDrain              = "ONCEGATE_PULL_DRAIN"
)

// PullEnvNames returns the variables PullPlan.Env writes beyond EnvNames, in a
// fixed order.
func PullEnvNames() []string {
	return []string{EnvPullMaxExtension, EnvPullMaxExtensionPeriod,
		EnvPullMaxOutstanding, EnvPullBackendConns, EnvPullDrain}
}

const (
	extensionForm   = "a Go duration such as 60m, or a negative one (-1s) to turn the extension off"
	periodForm      = "a Go duration from 10s to 600s, or 0s for none"
	outstandingForm = "a whole number of messages, -1 for unlimited, or 0 for the default"
	connsForm       = "a whole number of connections, or 0 for unbounded"
)

// Env returns the plan, defaults applied, as the variables of EnvNames and
// PullEnvNames. PullFromEnv reads the result back to an equal plan.
func (p PullPlan) Env() map[string]string {
	r := p.WithDefaults()
	env := r.Plan.Env()
	maps.Copy(env, map[string]string{
		EnvPullMaxExtension:       fmtDur(r.MaxExtension),
		EnvPullMaxExtensionPeriod: fmtDur(r.MaxExtensionPeriod),
		EnvPullMaxOutstanding:     strconv.Itoa(r.MaxOutstandingMessages),
		EnvPullBackendConns:       strconv.Itoa(r.BackendConnections),
		EnvPullDrain:              fmtDur(r.Drain),
	})
	return env
}

// PullFromEnv reads a PullPlan through getenv: the Plan's variables as FromEnv
// reads them (ONCEGATE_LEASE and ONCEGATE_WORK_DEADLINE required) plus
// PullEnvNames, each optional (unset or empty means the default). It applies the defaults and validates the
// result. A missing or malformed variable returns an *EnvError (several joined
// with errors.Join); an unsafe plan returns the resolved plan with a
// *PlanError matching ErrUnsafePlan.
func PullFromEnv(getenv func(string) string) (PullPlan, error) {
	base, errs := readEnv(getenv)
	p := PullPlan{Plan: base}
	dur := func(name string, dst *time.Duration, want string) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			errs = append(errs, &EnvError{Var: name, Value: v, Want: want, Err: err})
			return
		}
		*dst = d
	}
	num := func(name string, dst *int, want string) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			errs = append(errs, &EnvError{Var: name, Value: v, Want: want, Err: err})
			return
		}
		*dst = n
	}
	dur(EnvPullMaxExtension, &p.MaxExtension, extensionForm)
	dur(EnvPullMaxExtensionPeriod, &p.MaxExtensionPeriod, periodForm)
	num(EnvPullMaxOutstanding, &p.MaxOutstandingMessages, outstandingForm)
	num(EnvPullBackendConns, &p.BackendConnections, connsForm)
	dur(EnvPullDrain, &p.Drain, durationForm)
	if p.BackendConnections < 0 {
		errs = append(errs, &EnvError{Var: EnvPullBackendConns, Value: strconv.Itoa(p.BackendConnections), Want: connsForm})
	}
	switch len(errs) {
	case 0:
	case 1:
		return PullPlan{}, errs[0]
	default:
		return PullPlan{}, errors.Join(errs...)
	}
	return p.WithDefaults(), p.Validate()
}
