package push

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/api/idtoken"
)

// Sentinel errors of OIDC verification. Callers branch on them with errors.Is.
var (
	// ErrUnauthenticated: the request carries no valid Google-signed ID token for
	// the audience (missing or non-bearer Authorization header, bad signature,
	// expired, wrong audience or issuer). Adapters answer 401. Returned by
	// OIDCConfig.Verify.
	ErrUnauthenticated = errors.New("oncegate: push not authenticated")
	// ErrForbidden: the token is valid but not the expected push service account's
	// (wrong or unverified email). Adapters answer 403. Returned by
	// OIDCConfig.Verify.
	ErrForbidden = errors.New("oncegate: push identity not allowed")
)

// googleIssuers are the issuers of Google-signed ID tokens (Google Identity,
// "Validate an ID token").
var googleIssuers = map[string]bool{"https://accounts.google.com": true, "accounts.google.com": true}

// TokenValidator checks an ID token's signature, expiry and audience, and returns
// its payload. *idtoken.Validator implements it; tests inject a validator built
// with idtoken.NewValidator and an HTTP client that serves a local key set.
type TokenValidator interface {
	Validate(ctx context.Context, token, audience string) (*idtoken.Payload, error)
}

var _ TokenValidator = (*idtoken.Validator)(nil)

// OIDCConfig turns on verification of the push's OIDC token (the push
// subscription's authentication setting; Pub/Sub, "Authentication for push
// subscriptions"). A request passes when its "Authorization: Bearer <token>" is a
// Google-signed ID token for Audience, issued by accounts.google.com, whose
// "email" claim equals ServiceAccountEmail with "email_verified" true.
// Verification happens before any claim is written.
type OIDCConfig struct {
	// Audience is the audience the subscription puts in the token (by default
	// the push endpoint URL). Required.
	Audience string
	// ServiceAccountEmail is the push subscription's service account. Required.
	ServiceAccountEmail string
	// Validator checks signatures. Nil means an *idtoken.Validator over Google's
	// published certificates (fetched over the network and cached).
	Validator TokenValidator
}

// validate checks the required fields and fills the default validator.
func (c *OIDCConfig) validate() (*OIDCConfig, error) {
	if c.Audience == "" {
		return nil, errors.New("push.OIDCConfig.Audience: required; set it to the audience of the push subscription's OIDC token (by default the endpoint URL)")
	}
	if c.ServiceAccountEmail == "" {
		return nil, errors.New("push.OIDCConfig.ServiceAccountEmail: required; set it to the push subscription's service account email")
	}
	v := *c
	if v.Validator == nil {
		val, err := idtoken.NewValidator(context.Background())
		if err != nil {
			return nil, fmt.Errorf("push.OIDCConfig: new validator: %w", err)
		}
		v.Validator = val
	}
	return &v, nil
}

// Verify checks an Authorization header value. It returns nil when the token is
// valid, an error matching ErrUnauthenticated when it is missing or invalid, and
// one matching ErrForbidden when it names another or an unverified identity.
// A nil Validator means the idtoken package's default validator.
func (c *OIDCConfig) Verify(ctx context.Context, authorization string) error {
	scheme, token, ok := strings.Cut(authorization, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return fmt.Errorf("%w: no bearer token", ErrUnauthenticated)
	}
	v := c.Validator
	if v == nil {
		v = defaultValidator{}
	}
	p, err := v.Validate(ctx, strings.TrimSpace(token), c.Audience)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnauthenticated, err)
	}
	if p.Audience != c.Audience {
		return fmt.Errorf("%w: audience %q is not %q", ErrUnauthenticated, p.Audience, c.Audience)
	}
	if !googleIssuers[p.Issuer] {
		return fmt.Errorf("%w: issuer %q is not Google", ErrUnauthenticated, p.Issuer)
	}
	email, _ := p.Claims["email"].(string)
	if email != c.ServiceAccountEmail {
		return fmt.Errorf("%w: email %q is not %q", ErrForbidden, email, c.ServiceAccountEmail)
	}
	if !verified(p.Claims["email_verified"]) {
		return fmt.Errorf("%w: email %q is not verified", ErrForbidden, email)
	}
	return nil
}

// verified accepts the boolean claim and its string form, which some Google
// tokens carry.
func verified(v any) bool {
	switch b := v.(type) {
	case bool:
		return b
	case string:
		return b == "true"
	}
	return false
}

type defaultValidator struct{}

func (defaultValidator) Validate(ctx context.Context, token, audience string) (*idtoken.Payload, error) {
	return idtoken.Validate(ctx, token, audience)
}
