package push_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/idtoken"

	"github.com/oncegate/oncegate/internal/oidctest"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/push"
)

const (
	audience = "https://worker.example.run.app/"
	pushSA   = "push-invoker@example-project.iam.gserviceaccount.com"
)

// keySet is a local key set standing in for Google's certificate endpoint.
type keySet struct {
	*oidctest.KeySet
	key *rsa.PrivateKey
	kid string
}

func newKeySet(t testing.TB) *keySet {
	ks := oidctest.New(t)
	return &keySet{KeySet: ks, key: ks.Key, kid: ks.KID}
}

// validator is the real idtoken validator over the local key set.
func (ks *keySet) validator(t testing.TB) push.TokenValidator { return ks.Validator(t) }

// sign returns an RS256 JWT with claims, signed by key under kid.
func sign(t testing.TB, key *rsa.PrivateKey, kid string, claims map[string]any) string {
	return oidctest.JWT(t, "RS256", kid, key, nil, claims)
}

// pushClaims are the claims of a Pub/Sub push token (Pub/Sub, "Authentication
// for push subscriptions").
func pushClaims() map[string]any {
	now := time.Now()
	return map[string]any{
		"iss": "https://accounts.google.com", "aud": audience, "azp": "1234567890",
		"email": pushSA, "email_verified": true, "sub": "1234567890",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
}

func TestOIDC(t *testing.T) {
	ks := newKeySet(t)
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	with := func(edit func(map[string]any)) string {
		c := pushClaims()
		edit(c)
		return "Bearer " + sign(t, ks.key, ks.kid, c)
	}
	tests := []struct {
		name   string
		auth   string
		status int
		err    error
	}{
		{"valid", with(func(map[string]any) {}), 204, nil},
		{"valid, lower-case scheme", "bearer " + sign(t, ks.key, ks.kid, pushClaims()), 204, nil},
		{"missing header", "", 401, push.ErrUnauthenticated},
		{"basic scheme", "Basic dXNlcjpwYXNz", 401, push.ErrUnauthenticated},
		{"wrong audience", with(func(c map[string]any) { c["aud"] = "https://evil.example/" }), 401, push.ErrUnauthenticated},
		{"expired", with(func(c map[string]any) { c["exp"] = time.Now().Add(-time.Minute).Unix() }), 401, push.ErrUnauthenticated},
		{"wrong issuer", with(func(c map[string]any) { c["iss"] = "https://evil.example" }), 401, push.ErrUnauthenticated},
		{"signed by another key", "Bearer " + sign(t, other, ks.kid, pushClaims()), 401, push.ErrUnauthenticated},
		{"unknown key id", "Bearer " + sign(t, ks.key, "nope", pushClaims()), 401, push.ErrUnauthenticated},
		{"garbage token", "Bearer abc.def", 401, push.ErrUnauthenticated},
		{"wrong email", with(func(c map[string]any) { c["email"] = "someone@example.com" }), 403, push.ErrForbidden},
		{"no email", with(func(c map[string]any) { delete(c, "email") }), 403, push.ErrForbidden},
		{"unverified email", with(func(c map[string]any) { c["email_verified"] = false }), 403, push.ErrForbidden},
		{"email_verified absent", with(func(c map[string]any) { delete(c, "email_verified") }), 403, push.ErrForbidden},
		{"email_verified as string", with(func(c map[string]any) { c["email_verified"] = "true" }), 204, nil},
	}
	cfg := &push.OIDCConfig{Audience: audience, ServiceAccountEmail: pushSA, Validator: ks.validator(t)}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := cfg.Verify(context.Background(), tt.auth); !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Errorf("Verify: %v, want %v", err, tt.err)
			}
			e := newEnv(t, nil, nil)
			ran := false
			h, err := push.NewHandler(e.gate, func(context.Context, *push.Message, gate.Claim) error {
				ran = true
				return nil
			}, &push.Options{AdapterOptions: push.AdapterOptions{OIDC: cfg}})
			if err != nil {
				t.Fatal(err)
			}
			hdr := http.Header{}
			if tt.auth != "" {
				hdr.Set("Authorization", tt.auth)
			}
			res := post(t, h, envelope("m-oidc", []byte("x"), 1), hdr)
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tt.status)
			}
			if tt.status != 204 {
				// Refused before any claim: nothing ran, nothing was written.
				if ran || e.store.Len() != 0 {
					t.Errorf("ran=%v, store holds %d records; want no claim", ran, e.store.Len())
				}
				if tt.status == 401 && res.Header.Get("WWW-Authenticate") == "" {
					t.Error("401 without WWW-Authenticate")
				}
			} else if !ran || e.store.Len() != 1 {
				t.Errorf("valid token: ran=%v records=%d", ran, e.store.Len())
			}
		})
	}
}

// TestOIDCChecksAudienceItself guards against a validator that ignores the
// audience: the config re-checks the payload.
func TestOIDCChecksAudienceItself(t *testing.T) {
	lax := validatorFunc(func(context.Context, string, string) (*idtoken.Payload, error) {
		return &idtoken.Payload{Issuer: "https://accounts.google.com", Audience: "https://other/",
			Claims: map[string]any{"email": pushSA, "email_verified": true}}, nil
	})
	cfg := &push.OIDCConfig{Audience: audience, ServiceAccountEmail: pushSA, Validator: lax}
	if err := cfg.Verify(context.Background(), "Bearer t"); !errors.Is(err, push.ErrUnauthenticated) {
		t.Errorf("err = %v, want ErrUnauthenticated", err)
	}
}

type validatorFunc func(ctx context.Context, token, audience string) (*idtoken.Payload, error)

func (f validatorFunc) Validate(ctx context.Context, token, audience string) (*idtoken.Payload, error) {
	return f(ctx, token, audience)
}

// TestRequireOIDC: the wrapper refuses a POST without a valid token of the
// push account (401, 403) before the handler sees it, lets a valid one and the
// safe methods (health probes) through, and refuses an incomplete config.
func TestRequireOIDC(t *testing.T) {
	ks := newKeySet(t)
	cfg := &push.OIDCConfig{Audience: audience, ServiceAccountEmail: pushSA, Validator: ks.validator(t)}
	reached := 0
	h, err := push.RequireOIDC(cfg, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached++
		w.WriteHeader(http.StatusNoContent)
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	other := pushClaims()
	other["email"] = "someone@example-project.iam.gserviceaccount.com"
	for _, tc := range []struct {
		name, method, auth string
		status             int
		outcome            string
		reached            bool
	}{
		{"no token", http.MethodPost, "", http.StatusUnauthorized, gate.OutcomeUnauthenticated.String(), false},
		{"forged", http.MethodPost, "Bearer " + sign(t, ks.key, "other-kid", pushClaims()), http.StatusUnauthorized, gate.OutcomeUnauthenticated.String(), false},
		{"another account", http.MethodPut, "Bearer " + sign(t, ks.key, ks.kid, other), http.StatusForbidden, gate.OutcomeForbidden.String(), false},
		{"valid", http.MethodPost, "Bearer " + sign(t, ks.key, ks.kid, pushClaims()), http.StatusNoContent, "", true},
		{"health probe", http.MethodGet, "", http.StatusNoContent, "", true},
	} {
		reached = 0
		req := httptest.NewRequest(tc.method, "/", strings.NewReader("{}"))
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.status || rec.Header().Get(push.HeaderOutcome) != tc.outcome || (reached == 1) != tc.reached {
			t.Errorf("%s: %d %q, reached %d; want %d %q, reached %v", tc.name, rec.Code, rec.Header().Get(push.HeaderOutcome), reached, tc.status, tc.outcome, tc.reached)
		}
	}
	if _, err := push.RequireOIDC(&push.OIDCConfig{Audience: audience}, http.NotFoundHandler(), nil); err == nil || !strings.Contains(err.Error(), "ServiceAccountEmail") {
		t.Errorf("incomplete config: err = %v, want one naming ServiceAccountEmail", err)
	}
}
