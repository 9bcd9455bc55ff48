package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/oncegate/oncegate/sizing"
)

// TestWorkerPullChecksThePullPlan: `worker --pull` reads the pull plan and
// refuses flow control past the backend's connections with the fix named;
// without --pull the same environment is a push worker, which does not read
// the pull variables.
func TestWorkerPullChecksThePullPlan(t *testing.T) {
	for k, v := range map[string]string{
		"ONCEGATE_BACKEND": "memory", "ONCEGATE_NAMESPACE": "orders",
		"ONCEGATE_LEASE": "60s", "ONCEGATE_HEARTBEAT": "20s", "ONCEGATE_WORK_DEADLINE": "30s",
		"ONCEGATE_PULL_SUBSCRIPTION": "orders-pull", "ONCEGATE_PULL_BACKEND_CONNS": "4",
		"ONCEGATE_PULL_MAX_OUTSTANDING": "100", "SUPPLIER_URL": "", "ONCEGATE_OIDC_DISABLED": "1",
	} {
		t.Setenv(k, v)
	}
	_, err := run(t, "worker", "--pull")
	if !errors.Is(err, sizing.ErrUnsafePlan) || !strings.Contains(err.Error(), "ONCEGATE_PULL_MAX_OUTSTANDING") || !strings.Contains(err.Error(), "lower it to 4") {
		t.Fatalf("worker --pull: %v; want the unsafe pull plan named", err)
	}
	_, err = run(t, "worker")
	if err == nil || errors.Is(err, sizing.ErrUnsafePlan) || !strings.Contains(err.Error(), "SUPPLIER_URL") {
		t.Fatalf("worker (push): %v; want the push worker's missing SUPPLIER_URL", err)
	}
}
