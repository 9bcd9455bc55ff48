package gateenv_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/api/idtoken"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/push"
)

// tokenValidator accepts the token "good" as the push account's for any
// audience, and nothing else.
type tokenValidator struct{}

func (tokenValidator) Validate(_ context.Context, token, audience string) (*idtoken.Payload, error) {
	if token != "good" {
		return nil, errors.New("bad signature")
	}
	return &idtoken.Payload{Issuer: "https://accounts.google.com", Audience: audience,
		Claims: map[string]any{"email": "push@p.iam.gserviceaccount.com", "email_verified": true}}, nil
}

// TestServeVerifiesTokensWhateverTheHandler is the regression test of a push
// handler built with nil options (no OIDC) served by Config.Serve while the
// environment requires verification: a push without a token, or with a bad
// one, must be refused 401 before any claim and run no body; a valid token and
// a health probe get through.
func TestServeVerifiesTokensWhateverTheHandler(t *testing.T) {
	e := env{"ONCEGATE_BACKEND": "fake", "ONCEGATE_NAMESPACE": "orders",
		gateenv.EnvOIDCAudience: "https://worker.example/", gateenv.EnvOIDCServiceAccount: "push@p.iam.gserviceaccount.com"}
	for k, v := range servePlan.Env() {
		e[k] = v
	}
	f := &fakeOpener{}
	reg := gateenv.Backends()
	reg["fake"] = f.open
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg, err := gateenv.New(context.Background(), &gateenv.Options{Getenv: e.Get, Backends: reg, Logger: quiet,
		OIDCValidator: tokenValidator{}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := cfg.NewGate()
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	h, err := push.NewHandler(g, func(context.Context, *push.Message, gate.Claim) error { runs.Add(1); return nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cfg.Serve(ctx, mux, &gateenv.ServeOptions{Listener: ln, Logger: quiet}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve = %v", err)
		}
	})
	url := "http://" + ln.Addr().String()
	send := func(method, path, auth, id string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, url+path, strings.NewReader(`{"message":{"messageId":"`+id+`"}}`))
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode, resp.Header.Get(push.HeaderOutcome)
	}
	for _, tc := range []struct {
		name, auth string
	}{{"no token", ""}, {"bad token", "Bearer forged"}, {"not bearer", "Basic Z29vZA=="}} {
		if code, out := send(http.MethodPost, "/", tc.auth, "m-"+tc.name); code != http.StatusUnauthorized || out != gate.OutcomeUnauthenticated.String() {
			t.Errorf("%s: %d %q, want 401 %q", tc.name, code, out, gate.OutcomeUnauthenticated.String())
		}
	}
	if n := runs.Load(); n != 0 {
		t.Fatalf("the body ran %d times for unauthenticated pushes", n)
	}
	if n := cfg.Backend.(interface{ Len() int }).Len(); n != 0 {
		t.Fatalf("%d records claimed for unauthenticated pushes", n)
	}
	if code, _ := send(http.MethodGet, "/healthz", "", ""); code != http.StatusOK {
		t.Errorf("health probe: %d, want 200 (GET needs no token)", code)
	}
	if code, out := send(http.MethodPost, "/", "Bearer good", "m-good"); code != http.StatusNoContent || runs.Load() != 1 {
		t.Errorf("valid token: %d %q, runs %d; want 204 and one run", code, out, runs.Load())
	}
}
