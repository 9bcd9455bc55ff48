// Package oidctest signs Google-style ID tokens with a local RSA key and serves
// its key set, so tests run the real idtoken validator without reaching Google.
package oidctest

import (
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"google.golang.org/api/idtoken"
	"google.golang.org/api/option"
)

// KeySet is a locally generated RSA key served as a JWKS on a loopback server,
// standing in for Google's certificate endpoint.
type KeySet struct {
	Key *rsa.PrivateKey
	KID string
	srv *httptest.Server
}

// New generates a 2,048-bit key and serves it until the test ends.
func New(t testing.TB) *KeySet {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ks := &KeySet{Key: k, KID: "local-1"}
	ks.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
			"kty": "RSA", "alg": "RS256", "use": "sig", "kid": ks.KID,
			"n": base64.RawURLEncoding.EncodeToString(k.N.Bytes()),
			"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes()),
		}}})
	}))
	t.Cleanup(ks.srv.Close)
	return ks
}

// Validator is the real *idtoken.Validator whose HTTP client sends every
// certificate fetch to the local key set instead of Google.
func (ks *KeySet) Validator(t testing.TB) *idtoken.Validator {
	t.Helper()
	target, _ := url.Parse(ks.srv.URL)
	v, err := idtoken.NewValidator(context.Background(), option.WithHTTPClient(&http.Client{Transport: redirect{to: target}}))
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

// Sign returns an RS256 JWT of claims signed by the key set's key.
func (ks *KeySet) Sign(t testing.TB, claims map[string]any) string {
	return JWT(t, "RS256", ks.KID, ks.Key, nil, claims)
}

// B64 is the base64url (unpadded) JSON of v, a JWT segment.
func B64(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

// JWT signs claims with header alg and kid: RS256 with key, HS256 with secret,
// anything else (such as "none") with an empty signature.
func JWT(t testing.TB, alg, kid string, key *rsa.PrivateKey, secret []byte, claims map[string]any) string {
	t.Helper()
	signing := B64(map[string]string{"alg": alg, "typ": "JWT", "kid": kid}) + "." + B64(claims)
	var sig []byte
	switch alg {
	case "RS256":
		sum := sha256.Sum256([]byte(signing))
		var err error
		if sig, err = rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:]); err != nil {
			t.Fatal(err)
		}
	case "HS256":
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(signing))
		sig = m.Sum(nil)
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// PushClaims are the claims of a Pub/Sub push token for audience and the push
// service account (Pub/Sub, "Authentication for push subscriptions"), valid for
// an hour.
func PushClaims(audience, account string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": "https://accounts.google.com", "aud": audience, "azp": "1234567890",
		"email": account, "email_verified": true, "sub": "1234567890",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}
