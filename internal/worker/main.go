package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/push"
)

// Worker-specific variables, beside the runtime's contract (gateenv).
const (
	// EnvPort is the port to listen on (Cloud Run sets it). Default 8080.
	EnvPort = "PORT"
	// EnvSupplierURL receives one POST per message. Required.
	EnvSupplierURL = "SUPPLIER_URL"
	// EnvKeyAttribute names a message attribute holding a business key.
	EnvKeyAttribute = "ONCEGATE_KEY_ATTRIBUTE"
	// EnvMode is "lock" (default) or "mutex".
	EnvMode = "ONCEGATE_MODE"
)

// Main configures the worker from getenv, serves push requests on "/" and
// GET /healthz until ctx is cancelled (SIGTERM on Cloud Run), then shuts down
// gracefully within the plan's shutdown grace (Cloud Run leaves 10 s before
// SIGKILL: Cloud Run container contract). Logs are JSON lines on logOut.
func Main(ctx context.Context, getenv func(string) string, logOut io.Writer) error {
	log := slog.New(slog.NewJSONHandler(logOut, nil))
	cfg, err := gateenv.New(ctx, &gateenv.Options{Getenv: getenv, Logger: log})
	if err != nil {
		return err
	}
	defer cfg.Close()
	g, err := cfg.NewGate()
	if err != nil {
		return err
	}
	var mode push.Mode
	switch m := getenv(EnvMode); m {
	case "", "lock":
		mode = push.ModeLock
	case "mutex":
		mode = push.ModeMutex
	default:
		return fmt.Errorf("%s=%q is malformed; want lock or mutex", EnvMode, m)
	}
	h, err := Handler(g, Config{SupplierURL: getenv(EnvSupplierURL), KeyAttribute: getenv(EnvKeyAttribute), Mode: mode}, cfg.PushOptions())
	if err != nil {
		return err
	}
	port := getenv(EnvPort)
	if port == "" {
		port = "8080"
	}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", ":"+port)
	if err != nil {
		return fmt.Errorf("listen on %s=%s: %w", EnvPort, port, err)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("worker: serving", "port", port, "backend", cfg.BackendName)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	grace := cfg.Plan.ShutdownGrace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("worker: drained and stopped")
	return nil
}
