package gateenv_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/sizing"
)

// TestOIDCRequired checks token verification is on unless explicitly disabled:
// a missing, partial, malformed or contradictory setting refuses to start,
// naming the variable.
func TestOIDCRequired(t *testing.T) {
	const aud, sa = "https://worker.example.run.app/", "push@example-project.iam.gserviceaccount.com"
	base := valid.With(gateenv.EnvOIDCDisabled, "")
	for _, tc := range []struct {
		name    string
		e       env
		wantVar string // "" means it must start
	}{
		{"none", base, gateenv.EnvOIDCAudience},
		{"disabled only while disabled gate", env{"ONCEGATE_DISABLED": "1"}, gateenv.EnvOIDCAudience},
		{"audience only", base.With(gateenv.EnvOIDCAudience, aud), gateenv.EnvOIDCServiceAccount},
		{"account only", base.With(gateenv.EnvOIDCServiceAccount, sa), gateenv.EnvOIDCAudience},
		{"account not an email", base.With(gateenv.EnvOIDCAudience, aud, gateenv.EnvOIDCServiceAccount, "push"), gateenv.EnvOIDCServiceAccount},
		{"account with a display name", base.With(gateenv.EnvOIDCAudience, aud, gateenv.EnvOIDCServiceAccount, "P <"+sa+">"), gateenv.EnvOIDCServiceAccount},
		{"opt-out malformed", base.With(gateenv.EnvOIDCDisabled, "yes please"), gateenv.EnvOIDCDisabled},
		{"opt-out and settings", base.With(gateenv.EnvOIDCDisabled, "1", gateenv.EnvOIDCAudience, aud), gateenv.EnvOIDCDisabled},
		{"opt-out 0 is not an opt-out", base.With(gateenv.EnvOIDCDisabled, "0"), gateenv.EnvOIDCAudience},
		{"both set", base.With(gateenv.EnvOIDCAudience, aud, gateenv.EnvOIDCServiceAccount, sa), ""},
		{"opt-out", base.With(gateenv.EnvOIDCDisabled, "1"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := load(t, tc.e)
			if tc.wantVar == "" {
				if err != nil {
					t.Fatal(err)
				}
				want := tc.e[gateenv.EnvOIDCAudience] != ""
				if got := c.PushOptions().OIDC; (got != nil) != want || want && (got.Audience != aud || got.ServiceAccountEmail != sa) {
					t.Errorf("PushOptions().OIDC = %+v, want set %v", got, want)
				}
				return
			}
			var ee *sizing.EnvError
			if !errors.As(err, &ee) || !strings.Contains(err.Error(), tc.wantVar) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line naming %s", err, tc.wantVar)
			}
		})
	}
}

// TestPlanFloors: a deployed plan's lease and heartbeat must be at least a
// second; ONCEGATE_HEARTBEAT=1ns is refused naming the variable.
func TestPlanFloors(t *testing.T) {
	for _, tc := range []struct {
		e       env
		wantVar string
	}{
		{valid.With("ONCEGATE_HEARTBEAT", "1ns"), "ONCEGATE_HEARTBEAT"},
		{valid.With("ONCEGATE_HEARTBEAT", "999ms"), "ONCEGATE_HEARTBEAT"},
		{valid.With("ONCEGATE_LEASE", "900ms", "ONCEGATE_HEARTBEAT", "0s", "ONCEGATE_WORK_DEADLINE", "500ms"), "ONCEGATE_LEASE"},
		{valid.With("ONCEGATE_HEARTBEAT", "1s"), ""},
		{valid.With("ONCEGATE_HEARTBEAT", "0s", "ONCEGATE_LEASE", "6m"), ""},
	} {
		_, _, err := load(t, tc.e)
		if tc.wantVar == "" {
			if err != nil {
				t.Errorf("%v: %v", tc.e, err)
			}
			continue
		}
		var ee *sizing.EnvError
		if !errors.As(err, &ee) || !strings.Contains(err.Error(), tc.wantVar+"=") || !strings.Contains(err.Error(), "at least") {
			t.Errorf("err = %v, want one naming %s and its floor", err, tc.wantVar)
		}
	}
}
