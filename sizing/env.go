package sizing

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Environment variables of the configuration contract (docs/design.md) that carry a
// Plan. Durations are in Go syntax (time.ParseDuration), attempts a decimal
// integer.
const (
	EnvLease               = "ONCEGATE_LEASE"
	EnvTTL                 = "ONCEGATE_TTL"
	EnvHeartbeat           = "ONCEGATE_HEARTBEAT"
	EnvWorkDeadline        = "ONCEGATE_WORK_DEADLINE"
	EnvShutdownGrace       = "ONCEGATE_SHUTDOWN_GRACE"
	EnvAckDeadline         = "ONCEGATE_ACK_DEADLINE"
	EnvMinBackoff          = "ONCEGATE_MIN_BACKOFF"
	EnvMaxBackoff          = "ONCEGATE_MAX_BACKOFF"
	EnvMaxDeliveryAttempts = "ONCEGATE_MAX_DELIVERY_ATTEMPTS"
	EnvRequestTimeout      = "ONCEGATE_REQUEST_TIMEOUT"
	EnvStoreTimeout        = "ONCEGATE_STORE_TIMEOUT"
	// EnvDeadLetterReplayWindow is optional; Env writes "0s" for none.
	EnvDeadLetterReplayWindow = "ONCEGATE_DEAD_LETTER_REPLAY_WINDOW"
	// EnvStoreOutage is optional (Plan.StoreOutage); Env writes "0s" for none.
	EnvStoreOutage = "ONCEGATE_STORE_OUTAGE"
)

// EnvNames returns the variables Env writes and FromEnv reads, in a fixed order.
func EnvNames() []string {
	return []string{
		EnvLease, EnvTTL, EnvHeartbeat, EnvWorkDeadline, EnvShutdownGrace,
		EnvAckDeadline, EnvMinBackoff, EnvMaxBackoff, EnvMaxDeliveryAttempts, EnvRequestTimeout,
		EnvStoreTimeout, EnvDeadLetterReplayWindow, EnvStoreOutage,
	}
}

// Accepted forms, as EnvError states them.
const (
	durationForm = "a Go duration such as 60s, 1m30s or 15m"
	attemptsForm = "a whole number from 5 to 100, or 0 to size it"
)

// EnvError reports one missing or malformed environment variable. Its message
// is one line naming the variable and the accepted form.
type EnvError struct {
	// Var is the variable's name, e.g. "ONCEGATE_LEASE".
	Var string
	// Value is the malformed value; empty when the variable is missing.
	Value string
	// Want is the accepted form, e.g. "a Go duration such as 60s, 1m30s or 15m".
	Want string
	// Err is the parse error, nil when the variable is missing.
	Err error
}

// Error returns one line naming the variable and the accepted form.
func (e *EnvError) Error() string {
	if e.Value == "" && e.Err == nil {
		return e.Var + " is not set; want " + e.Want
	}
	return e.Var + "=" + strconv.Quote(e.Value) + " is malformed; want " + e.Want
}

// Unwrap returns the parse error.
func (e *EnvError) Unwrap() error { return e.Err }

// Env returns the plan, with defaults applied, as the ONCEGATE_* variables of
// EnvNames: durations in Go syntax without trailing zero units ("1m", "15m",
// "1m30s"), a heartbeat, a replay window and a store outage of "0s" for none,
// attempts in decimal. FromEnv reads the result back to an equal plan.
func (p Plan) Env() map[string]string {
	r := p.WithDefaults()
	return map[string]string{
		EnvLease:                  fmtDur(r.Lease),
		EnvTTL:                    fmtDur(r.TTL),
		EnvHeartbeat:              fmtDur(r.Heartbeat),
		EnvWorkDeadline:           fmtDur(r.WorkDeadline),
		EnvShutdownGrace:          fmtDur(r.ShutdownGrace),
		EnvAckDeadline:            fmtDur(r.AckDeadline),
		EnvMinBackoff:             fmtDur(r.MinBackoff),
		EnvMaxBackoff:             fmtDur(r.MaxBackoff),
		EnvMaxDeliveryAttempts:    strconv.Itoa(r.MaxDeliveryAttempts),
		EnvRequestTimeout:         fmtDur(r.RequestTimeout),
		EnvStoreTimeout:           fmtDur(r.StoreTimeout),
		EnvDeadLetterReplayWindow: fmtDur(r.DeadLetterReplayWindow),
		EnvStoreOutage:            fmtDur(r.StoreOutage),
	}
}

// FromEnv reads a plan from the ONCEGATE_* variables through getenv (os.Getenv
// in production, a map lookup in tests), applies the defaults and validates it,
// so the runtime refuses to serve a plan that drifted from what the components
// deployed.
//
// ONCEGATE_LEASE and ONCEGATE_WORK_DEADLINE are required; an unset or empty
// optional variable means the field's default (a heartbeat of zero means none).
// Surrounding spaces are ignored. A missing or malformed variable returns an
// *EnvError (several are joined with errors.Join, one line each). An unsafe
// plan returns the resolved plan together with a *PlanError matching
// ErrUnsafePlan.
func FromEnv(getenv func(string) string) (Plan, error) {
	p, errs := readEnv(getenv)
	switch len(errs) {
	case 0:
	case 1:
		return Plan{}, errs[0]
	default:
		return Plan{}, errors.Join(errs...)
	}
	return p.WithDefaults(), p.Validate()
}

// readEnv reads the plan's variables as FromEnv documents, without defaults,
// and returns every missing or malformed one as an *EnvError.
func readEnv(getenv func(string) string) (Plan, []error) {
	var p Plan
	var errs []error
	dur := func(name string, dst *time.Duration, required bool) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			if required {
				errs = append(errs, &EnvError{Var: name, Want: durationForm})
			}
			return
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			errs = append(errs, &EnvError{Var: name, Value: v, Want: durationForm, Err: err})
			return
		}
		*dst = d
	}
	dur(EnvLease, &p.Lease, true)
	dur(EnvTTL, &p.TTL, false)
	dur(EnvHeartbeat, &p.Heartbeat, false)
	dur(EnvWorkDeadline, &p.WorkDeadline, true)
	dur(EnvShutdownGrace, &p.ShutdownGrace, false)
	dur(EnvAckDeadline, &p.AckDeadline, false)
	dur(EnvMinBackoff, &p.MinBackoff, false)
	dur(EnvMaxBackoff, &p.MaxBackoff, false)
	dur(EnvRequestTimeout, &p.RequestTimeout, false)
	dur(EnvStoreTimeout, &p.StoreTimeout, false)
	dur(EnvDeadLetterReplayWindow, &p.DeadLetterReplayWindow, false)
	dur(EnvStoreOutage, &p.StoreOutage, false)
	if v := strings.TrimSpace(getenv(EnvMaxDeliveryAttempts)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			errs = append(errs, &EnvError{Var: EnvMaxDeliveryAttempts, Value: v, Want: attemptsForm, Err: err})
		}
		p.MaxDeliveryAttempts = n
	}
	return p, errs
}
