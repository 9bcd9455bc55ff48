package gateenv

import (
	"strings"

	"github.com/oncegate/oncegate/sizing"
)

// envError joins several configuration errors on one line; errors.As finds
// each *sizing.EnvError and errors.Is matches sizing.ErrUnsafePlan.
type envError struct{ errs []error }

func (e *envError) Error() string {
	msgs := make([]string, len(e.errs))
	for i, err := range e.errs {
		msgs[i] = err.Error()
	}
	return "gateenv: " + strings.Join(msgs, "; ")
}

func (e *envError) Unwrap() []error { return e.errs }

// joinEnv flattens errors.Join results so each problem is listed once.
func joinEnv(errs []error) error {
	var flat []error
	for _, err := range errs {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			if _, isPlan := err.(*sizing.PlanError); !isPlan {
				flat = append(flat, j.Unwrap()...)
				continue
			}
		}
		flat = append(flat, err)
	}
	return &envError{errs: flat}
}

// planVars maps a sizing.Plan field to the variable that sets it.
var planVars = map[string]string{
	"Lease": sizing.EnvLease, "TTL": sizing.EnvTTL, "Heartbeat": sizing.EnvHeartbeat,
	"WorkDeadline": sizing.EnvWorkDeadline, "ShutdownGrace": sizing.EnvShutdownGrace,
	"AckDeadline": sizing.EnvAckDeadline, "MinBackoff": sizing.EnvMinBackoff,
	"MaxBackoff": sizing.EnvMaxBackoff, "MaxDeliveryAttempts": sizing.EnvMaxDeliveryAttempts,
	"RequestTimeout": sizing.EnvRequestTimeout, "StoreTimeout": sizing.EnvStoreTimeout,
	"DeadLetterReplayWindow": sizing.EnvDeadLetterReplayWindow, "StoreOutage": sizing.EnvStoreOutage,
}

// unsafePlan names the variables behind each violation of the plan.
type unsafePlan struct{ pe *sizing.PlanError }

func (u unsafePlan) Error() string {
	parts := make([]string, len(u.pe.Violations))
	for i, v := range u.pe.Violations {
		name := planVars[v.Field]
		if name == "" {
			name = v.Field
		}
		parts[i] = name + ": " + v.Message
	}
	return "unsafe sizing plan: " + strings.Join(parts, "; ")
}

func (u unsafePlan) Unwrap() error { return u.pe }
