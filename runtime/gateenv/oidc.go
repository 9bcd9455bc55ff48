package gateenv

import (
	"errors"
	"net/mail"
	"strconv"

	"github.com/oncegate/oncegate/runtime/push"
	"github.com/oncegate/oncegate/sizing"
)

// Variables of the push authentication contract. The push subscription signs
// each request with an OIDC token of its service account for an audience
// (Pub/Sub, "Authentication for push subscriptions"); the components set both
// variables from the subscription they create.
const (
	// EnvOIDCAudience is the audience the push subscription puts in its tokens
	// (by default the push endpoint URL).
	EnvOIDCAudience = "ONCEGATE_OIDC_AUDIENCE"
	// EnvOIDCServiceAccount is the push subscription's service account email.
	EnvOIDCServiceAccount = "ONCEGATE_OIDC_SERVICE_ACCOUNT"
	// EnvOIDCDisabled=1 serves pushes without verifying any token: for local
	// runs only (the demo, the tests, the quickstart), where nothing signs them.
	EnvOIDCDisabled = "ONCEGATE_OIDC_DISABLED"
)

// parseOIDC reads the OIDC variables. Verification is required: both names
// must be set unless ONCEGATE_OIDC_DISABLED=1, and setting them together with
// the opt-out is refused as ambiguous. The result is nil when disabled.
func parseOIDC(get func(string) string, v push.TokenValidator) (*push.OIDCConfig, []error) {
	aud, sa, off := get(EnvOIDCAudience), get(EnvOIDCServiceAccount), get(EnvOIDCDisabled)
	disabled := false
	if off != "" {
		b, err := strconv.ParseBool(off)
		if err != nil {
			return nil, []error{&sizing.EnvError{Var: EnvOIDCDisabled, Value: off, Want: "1 (no token verification, local runs only) or 0", Err: err}}
		}
		disabled = b
	}
	if disabled {
		if aud != "" || sa != "" {
			return nil, []error{&sizing.EnvError{Var: EnvOIDCDisabled, Value: off,
				Want: "unset when " + EnvOIDCAudience + " or " + EnvOIDCServiceAccount + " is set",
				Err:  errors.New("verification both configured and disabled")}}
		}
		return nil, nil
	}
	var errs []error
	if aud == "" {
		errs = append(errs, &sizing.EnvError{Var: EnvOIDCAudience,
			Want: "the push subscription's OIDC audience (by default the endpoint URL); or " + EnvOIDCDisabled + "=1 for a local run"})
	}
	if a, err := mail.ParseAddress(sa); sa == "" || err != nil || a.Address != sa {
		e := &sizing.EnvError{Var: EnvOIDCServiceAccount, Value: sa,
			Want: "the push subscription's service account email (name@project.iam.gserviceaccount.com); or " + EnvOIDCDisabled + "=1 for a local run"}
		if sa != "" {
			e.Err = errors.New("not an email address")
		}
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &push.OIDCConfig{Audience: aud, ServiceAccountEmail: sa, Validator: v}, nil
}
