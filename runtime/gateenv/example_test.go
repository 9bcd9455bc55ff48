package gateenv_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/push"
)

// A worker's start-up: configuration from the environment (here a map; in
// production os.Getenv), then a gate and a push handler.
func Example() {
	vars := map[string]string{
		"ONCEGATE_BACKEND": "memory", "ONCEGATE_NAMESPACE": "orders",
		"ONCEGATE_LEASE": "60s", "ONCEGATE_HEARTBEAT": "20s", "ONCEGATE_WORK_DEADLINE": "5m",
		// A local run: nothing signs the pushes. In production the components set
		// ONCEGATE_OIDC_AUDIENCE and ONCEGATE_OIDC_SERVICE_ACCOUNT instead.
		"ONCEGATE_OIDC_DISABLED": "1",
	}
	quiet := slog.New(slog.DiscardHandler)
	cfg, err := gateenv.New(context.Background(), &gateenv.Options{Getenv: func(k string) string { return vars[k] }, Logger: quiet})
	if err != nil {
		fmt.Println(err) // one line naming the variable; refuse to serve
		return
	}
	defer cfg.Close()
	g, err := cfg.NewGate()
	if err != nil {
		panic(err)
	}
	h, err := push.NewHandler(g, func(ctx context.Context, m *push.Message, c gate.Claim) error { return nil }, cfg.PushOptions())
	if err != nil {
		panic(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"message":{"messageId":"42"}}`)))
	fmt.Println(cfg.BackendName, g.Key("42"), cfg.Plan.Lease, cfg.Plan.Heartbeat, rec.Code)
	// Output: memory orders:42 1m0s 20s 204
}

// A malformed variable stops start-up with one line naming it and its form.
func Example_malformed() {
	vars := map[string]string{"ONCEGATE_BACKEND": "memory", "ONCEGATE_NAMESPACE": "orders",
		"ONCEGATE_LEASE": "60", "ONCEGATE_WORK_DEADLINE": "30s", "ONCEGATE_OIDC_DISABLED": "1"}
	_, err := gateenv.New(context.Background(), &gateenv.Options{Getenv: func(k string) string { return vars[k] }})
	fmt.Println(err)
	// Output: gateenv: ONCEGATE_LEASE="60" is malformed; want a Go duration such as 60s, 1m30s or 15m
}
