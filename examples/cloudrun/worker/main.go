package worker

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/push"

	// The reference worker runs on whichever backend ONCEGATE_BACKEND names,
	// so it links all of them; a service on one backend imports only that
	// one's package (gateenv/sqlenv, gateenv/redisenv or gateenv/datastoreenv).
	_ "github.com/oncegate/oncegate/runtime/gateenv/allbackends"
)

// Worker-specific variables, beside the runtime's contract (gateenv).
const (
	// EnvPort is the port to listen on (Cloud Run sets it). Default 8080.
	EnvPort = gateenv.EnvPort
	// EnvSupplierURL receives one POST per message. Required.
	EnvSupplierURL = "SUPPLIER_URL"
	// EnvKeyAttribute names a message attribute holding a business key.
	EnvKeyAttribute = "ONCEGATE_KEY_ATTRIBUTE"
	// EnvMode is "lock" (default) or "mutex".
	EnvMode = "ONCEGATE_MODE"
)

// Main configures the worker from getenv and serves push requests on "/" and
// GET /healthz on $PORT with gateenv's Config.Serve until ctx is cancelled or
// SIGTERM arrives (Cloud Run's shutdown signal), then drains in-flight
// deliveries within the plan's shutdown grace and closes the store. Logs are
// JSON lines on logOut.
func Main(ctx context.Context, getenv func(string) string, logOut io.Writer) error {
	log := slog.New(slog.NewJSONHandler(logOut, nil))
	cfg, err := gateenv.New(ctx, &gateenv.Options{Getenv: getenv, Logger: log})
	if err != nil {
		return err
	}
	g, err := cfg.NewGate()
	if err != nil {
		_ = cfg.Close()
		return err
	}
	var mode push.Mode
	switch m := getenv(EnvMode); m {
	case "", "lock":
		mode = push.ModeLock
	case "mutex":
		mode = push.ModeMutex
	default:
		_ = cfg.Close()
		return fmt.Errorf("%s=%q is malformed; want lock or mutex", EnvMode, m)
	}
	h, err := Handler(g, Config{SupplierURL: getenv(EnvSupplierURL), KeyAttribute: getenv(EnvKeyAttribute), Mode: mode}, cfg.PushOptions())
	if err != nil {
		_ = cfg.Close()
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	return cfg.Serve(ctx, mux, &gateenv.ServeOptions{Getenv: getenv, Logger: log})
}
