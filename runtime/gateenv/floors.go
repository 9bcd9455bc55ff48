package gateenv

import (
	"errors"

	"github.com/oncegate/oncegate/sizing"
)

// Floors of the deployed plan, stricter than the gate's (gate.MinLease,
// gate.MinHeartbeat), which tests with fake clocks need. A Cloud Run worker
// talks to a managed store over the network: a lease under a second lapses
// within a few slow round trips, and a heartbeat under a second spends the
// store's write budget (and, when renewals fail, the log) on one body.
// Pub/Sub's own shortest ack deadline is 10 s (Pub/Sub, "Subscription
// properties": acknowledgement deadline), so no sound plan comes near either.
// sizing.PullPlan.Validate applies the same floors (sizing.MinDeployedLease,
// MinDeployedHeartbeat), so the components refuse a pull plan below them at
// preview time.
const (
	MinEnvLease     = sizing.MinDeployedLease
	MinEnvHeartbeat = sizing.MinDeployedHeartbeat
)

// checkFloors refuses a plan whose lease or (non-zero) heartbeat is below the
// floors, naming the variable.
func checkFloors(p sizing.Plan) []error {
	var errs []error
	if p.Lease != 0 && p.Lease < MinEnvLease {
		errs = append(errs, &sizing.EnvError{Var: sizing.EnvLease, Value: p.Lease.String(),
			Want: "at least " + MinEnvLease.String(), Err: errors.New("below the floor")})
	}
	if p.Heartbeat != 0 && p.Heartbeat < MinEnvHeartbeat {
		errs = append(errs, &sizing.EnvError{Var: sizing.EnvHeartbeat, Value: p.Heartbeat.String(),
			Want: "0s (none) or at least " + MinEnvHeartbeat.String(), Err: errors.New("below the floor")})
	}
	return errs
}
