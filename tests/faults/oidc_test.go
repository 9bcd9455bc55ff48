package faults_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/oidctest"
	"github.com/oncegate/oncegate/runtime/cloudevent"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/push"
)

const (
	oidcAudience = "https://worker.example.run.app/"
	oidcAccount  = "push-invoker@example-project.iam.gserviceaccount.com"
)

// keySet is a local key set standing in for Google's certificate endpoint;
// validator is the real idtoken validator whose every certificate fetch goes
// there.
type keySet struct {
	*oidctest.KeySet
	key *rsa.PrivateKey
	kid string
}

func newKeySet(t *testing.T) *keySet {
	ks := oidctest.New(t)
	return &keySet{KeySet: ks, key: ks.Key, kid: ks.KID}
}

func (ks *keySet) validator(t *testing.T) push.TokenValidator { return ks.Validator(t) }

var (
	b64 = oidctest.B64
	jwt = func(t *testing.T, alg, kid string, key *rsa.PrivateKey, secret []byte, claims map[string]any) string {
		return oidctest.JWT(t, alg, kid, key, secret, claims)
	}
)

// pushClaims are the claims of a Pub/Sub push token (Pub/Sub, "Authentication
// for push subscriptions").
func pushClaims() map[string]any {
	now := time.Now()
	return map[string]any{"iss": "https://accounts.google.com", "aud": oidcAudience, "azp": "1234567890",
		"email": oidcAccount, "email_verified": true, "sub": "1234567890",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

// hostileTokens returns Authorization values that must never pass, by name.
func hostileTokens(t *testing.T, ks *keySet) map[string]string {
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := x509.MarshalPKIXPublicKey(&ks.key.PublicKey)
	with := func(edit func(c map[string]any)) string {
		c := pushClaims()
		edit(c)
		return "Bearer " + jwt(t, "RS256", ks.kid, ks.key, nil, c)
	}
	valid := jwt(t, "RS256", ks.kid, ks.key, nil, pushClaims())
	parts := strings.Split(valid, ".")
	evil := pushClaims()
	evil["email"] = "attacker@evil.example"
	return map[string]string{
		"no header":                 "",
		"empty bearer":              "Bearer ",
		"basic scheme":              "Basic " + base64.StdEncoding.EncodeToString([]byte(oidcAccount+":x")),
		"garbage":                   "Bearer a.b.c",
		"1 MiB of garbage":          "Bearer " + strings.Repeat("A", 1<<20),
		"signed by another key":     "Bearer " + jwt(t, "RS256", ks.kid, other, nil, pushClaims()),
		"unknown key id":            "Bearer " + jwt(t, "RS256", "local-2", ks.key, nil, pushClaims()),
		"alg none":                  "Bearer " + jwt(t, "none", ks.kid, nil, nil, pushClaims()),
		"HS256 with the public key": "Bearer " + jwt(t, "HS256", ks.kid, nil, pub, pushClaims()),
		"payload swapped":           "Bearer " + parts[0] + "." + b64(evil) + "." + parts[2],
		"signature cut":             "Bearer " + valid[:len(valid)-10],
		"expired a minute ago":      with(func(c map[string]any) { c["exp"] = time.Now().Add(-time.Minute).Unix() }),
		"expired a day ago":         with(func(c map[string]any) { c["exp"] = time.Now().Add(-24 * time.Hour).Unix() }),
		"no expiry":                 with(func(c map[string]any) { delete(c, "exp") }),
		"wrong audience":            with(func(c map[string]any) { c["aud"] = "https://evil.example/" }),
		"audience with a suffix":    with(func(c map[string]any) { c["aud"] = oidcAudience + "x" }),
		"audience list":             with(func(c map[string]any) { c["aud"] = []string{"https://evil.example/", oidcAudience} }),
		"wrong issuer":              with(func(c map[string]any) { c["iss"] = "https://evil.example" }),
		"wrong account":             with(func(c map[string]any) { c["email"] = "other@example-project.iam.gserviceaccount.com" }),
		"account in upper case":     with(func(c map[string]any) { c["email"] = strings.ToUpper(oidcAccount) }),
		"account with a NUL":        with(func(c map[string]any) { c["email"] = oidcAccount + "\x00" }),
		"account with a space":      with(func(c map[string]any) { c["email"] = oidcAccount + " " }),
		"account unverified":        with(func(c map[string]any) { c["email_verified"] = false }),
		"account not a string":      with(func(c map[string]any) { c["email"] = []string{oidcAccount} }),
		"no account":                with(func(c map[string]any) { delete(c, "email") }),
	}
}

// TestOIDCHostileTokens sends forged, expired, wrong-audience and wrong-account
// tokens to the push and CloudEvent adapters on every backend: each is answered
// 401 or 403 before anything is claimed (the store holds no record of the key and
// the body never ran). A valid token, sent last, runs: the setup accepts real
// tokens.
func TestOIDCHostileTokens(t *testing.T) {
	ks := newKeySet(t)
	cfg := &push.OIDCConfig{Audience: oidcAudience, ServiceAccountEmail: oidcAccount, Validator: ks.validator(t)}
	tokens := hostileTokens(t, ks)
	valid := "Bearer " + jwt(t, "RS256", ks.kid, ks.key, nil, pushClaims())
	for _, b := range everyBackend {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			backend := b.make(t)
			g, err := gate.New(backend, &gate.Options{Namespace: "oidc", Logger: quietLog})
			if err != nil {
				t.Fatal(err)
			}
			var runs atomic.Int64
			ph, err := push.NewHandler(g, func(context.Context, *push.Message, gate.Claim) error { runs.Add(1); return nil },
				&push.Options{AdapterOptions: push.AdapterOptions{OIDC: cfg, Logger: quietLog}})
			if err != nil {
				t.Fatal(err)
			}
			ch, err := cloudevent.NewHandler(g, func(context.Context, *cloudevent.Event, gate.Claim) error { runs.Add(1); return nil },
				&cloudevent.Options{AdapterOptions: push.AdapterOptions{OIDC: cfg, Logger: quietLog}})
			if err != nil {
				t.Fatal(err)
			}
			f := figures{Class: "OIDC: forged, expired, wrong-audience, wrong-account tokens", Backend: b.name}
			ins := backend
			i := 0
			send := func(adapter string, h http.Handler, auth string) (int, string) {
				i++
				id := fmt.Sprintf("m-%d", i)
				var req *http.Request
				if adapter == "push" {
					req = httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(envelope(id, []byte("x"), 1)))
				} else {
					req = httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(envelope(id, []byte("x"), 0)))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("ce-specversion", "1.0")
					req.Header.Set("ce-type", cloudevent.PubSubMessagePublished)
					req.Header.Set("ce-source", "//pubsub.googleapis.com/projects/example-project/topics/orders")
					req.Header.Set("ce-id", id)
				}
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				return rec.Result().StatusCode, g.Key(id)
			}
			for _, adapter := range []struct {
				name string
				h    http.Handler
			}{{"push", ph}, {"cloudevent", ch}} {
				for name, auth := range tokens {
					f.Messages++
					f.Tried++
					status, key := send(adapter.name, adapter.h, auth)
					_, found, err := ins.Inspect(context.Background(), key)
					switch {
					case err != nil:
						t.Fatal(err)
					case found:
						f.Duplicates++ // a claim written for a refused token
						t.Errorf("%s, %s: a record was written", adapter.name, name)
					case status != 401 && status != 403:
						t.Errorf("%s, %s: status %d, want 401 or 403", adapter.name, name, status)
					default:
						f.Processed++
					}
				}
				if status, key := send(adapter.name, adapter.h, valid); status != 204 {
					t.Errorf("%s with a valid token: %d, want 204", adapter.name, status)
				} else if _, found, _ := ins.Inspect(context.Background(), key); !found {
					t.Errorf("%s with a valid token: no record", adapter.name)
				}
			}
			if got := runs.Load(); got != 2 {
				t.Errorf("bodies ran %d times, want 2 (the valid tokens only)", got)
			}
			f.Note = fmt.Sprintf("%d token forms × 2 adapters refused 401/403 with no record written; a valid token ran on each adapter", len(tokens))
			report(t, f)
		})
	}
}
