package push_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"google.golang.org/api/idtoken"
	"google.golang.org/api/option"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/push"
)

const (
	audience = "https://worker.example.run.app/"
	pushSA   = "push-invoker@example-project.iam.gserviceaccount.com"
)

// keySet is a locally generated RSA key set served as a JWKS, standing in for
// Google's certificate endpoint.
type keySet struct {
	key *rsa.PrivateKey
	kid string
	srv *httptest.Server
}

func newKeySet(t testing.TB) *keySet {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ks := &keySet{key: k, kid: "local-1"}
	ks.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
			"kty": "RSA", "alg": "RS256", "use": "sig", "kid": ks.kid,
			"n": base64.RawURLEncoding.EncodeToString(k.N.Bytes()),
			"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes()),
		}}})
	}))
	t.Cleanup(ks.srv.Close)
	return ks
}

// validator is the real idtoken validator whose HTTP client sends every
// certificate fetch to the local key set instead of Google.
func (ks *keySet) validator(t testing.TB) push.TokenValidator {
	t.Helper()
	target, _ := url.Parse(ks.srv.URL)
	client := &http.Client{Transport: redirect{to: target}}
	v, err := idtoken.NewValidator(context.Background(), option.WithHTTPClient(client))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

type redirect struct{ to *url.URL }

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host, req.Host = r.to.Scheme, r.to.Host, r.to.Host
	return http.DefaultTransport.RoundTrip(req)
}

// sign returns an RS256 JWT with claims, signed by key under kid.
func sign(t testing.TB, key *rsa.PrivateKey, kid string, claims map[string]any) string {
	t.Helper()
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	head := enc(map[string]string{"alg": "RS256", "typ": "JWT", "kid": kid})
	body := enc(claims)
	sum := sha256.Sum256([]byte(head + "." + body))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return head + "." + body + "." + base64.RawURLEncoding.EncodeToString(sig)
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
			}, &push.Options{OIDC: cfg})
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
