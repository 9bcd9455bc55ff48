package gateenv_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/sizing"
)

func TestNewAdminNeedsNoPlan(t *testing.T) {
	f := &fakeOpener{}
	reg := gateenv.Backends()
	reg["fake"] = f.open
	for _, tc := range []struct {
		name    string
		e       env
		ns      string
		ttl     time.Duration
		wantErr string
	}{
		{name: "backend and namespace only", e: env{"ONCEGATE_BACKEND": "fake", "ONCEGATE_NAMESPACE": "orders"}, ns: "orders", ttl: gate.DefaultTTL},
		{name: "no namespace", e: env{"ONCEGATE_BACKEND": "fake"}, ttl: gate.DefaultTTL},
		{name: "an unsafe plan is not read", e: env{"ONCEGATE_BACKEND": "fake", "ONCEGATE_LEASE": "1s", "ONCEGATE_WORK_DEADLINE": "1h", "ONCEGATE_TTL": "24h"}, ttl: 24 * time.Hour},
		{name: "no backend", e: env{"ONCEGATE_NAMESPACE": "orders"}, wantErr: "ONCEGATE_BACKEND"},
		{name: "bad ttl", e: env{"ONCEGATE_BACKEND": "fake", "ONCEGATE_TTL": "-1h"}, wantErr: "ONCEGATE_TTL"},
		{name: "bad namespace", e: env{"ONCEGATE_BACKEND": "fake", "ONCEGATE_NAMESPACE": "a:b"}, wantErr: "ONCEGATE_NAMESPACE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := gateenv.NewAdmin(context.Background(), &gateenv.Options{Getenv: tc.e.Get, Backends: reg})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Gate.Namespace != tc.ns || c.Plan.TTL != tc.ttl || c.Plan.Lease != 0 {
				t.Fatalf("config = namespace %q, plan %+v; want namespace %q, ttl %s and no plan", c.Gate.Namespace, c.Plan, tc.ns, tc.ttl)
			}
			// A record an admin command writes outlives the service's default
			// redelivery horizon, as the Gate's own records do.
			if svc := (sizing.Plan{}).WithDefaults().TTL; tc.e["ONCEGATE_TTL"] == "" && (c.Plan.TTL < svc || c.Gate.TTL != c.Plan.TTL) {
				t.Fatalf("admin ttl %s (gate %s), shorter than the service's default %s", c.Plan.TTL, c.Gate.TTL, svc)
			}
		})
	}
}
