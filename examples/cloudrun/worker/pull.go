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

	"cloud.google.com/go/pubsub/v2"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/gateenv/pullenv"
	"github.com/oncegate/oncegate/runtime/pull"
	"github.com/oncegate/oncegate/runtime/push"
)

// PullMain is Main for a pull subscriber: it configures the worker with
// pullenv.New, receives from ONCEGATE_PULL_SUBSCRIPTION in
// GOOGLE_CLOUD_PROJECT (the client honours PUBSUB_EMULATOR_HOST) with the
// plan's receive settings, forwards each message's data to SUPPLIER_URL through
// a pull.Receiver, and answers GET /healthz on PORT (when set) while it
// receives. When ctx is cancelled (SIGTERM) it stops receiving and lets running
// bodies finish within the plan's drain. Logs are JSON lines on logOut.
func PullMain(ctx context.Context, getenv func(string) string, logOut io.Writer) error {
	log := slog.New(slog.NewJSONHandler(logOut, nil))
	cfg, err := pullenv.New(ctx, &gateenv.Options{Getenv: getenv, Logger: log})
	if err != nil {
		return err
	}
	defer cfg.Close()
	g, err := cfg.NewGate()
	if err != nil {
		return err
	}
	o := cfg.PullOptions()
	switch m := getenv(EnvMode); m {
	case "", "lock":
		o.Mode = pull.ModeLock
	case "mutex":
		o.Mode = pull.ModeMutex
	case "do":
		o.Mode = pull.ModeDo
	default:
		return fmt.Errorf("%s=%q is malformed; want lock, mutex or do", EnvMode, m)
	}
	if attr := getenv(EnvKeyAttribute); attr != "" {
		o.KeyFunc = push.AttributeKey(attr)
	}
	url := getenv(EnvSupplierURL)
	if url == "" {
		return errors.New("SUPPLIER_URL: required (the URL that receives one POST per message)")
	}
	rc, err := pull.New(g, func(ctx context.Context, m *push.Message, c gate.Claim) error {
		return Forward(ctx, http.DefaultClient, url, m.Data, c)
	}, o)
	if err != nil {
		return err
	}
	client, err := pubsub.NewClient(ctx, getenv(gateenv.EnvProject))
	if err != nil {
		return fmt.Errorf("pubsub client: %w", err)
	}
	defer client.Close()
	sub := client.Subscriber(cfg.Subscription)
	sub.ReceiveSettings = cfg.ReceiveSettings()
	if port := getenv(EnvPort); port != "" {
		ln, err := net.Listen("tcp", ":"+port)
		if err != nil {
			return fmt.Errorf("listen on %s=%s: %w", EnvPort, port, err)
		}
		mux := http.NewServeMux()
		mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
	}
	log.Info("worker: receiving", "subscription", sub.String(), "backend", cfg.BackendName,
		"max_outstanding_messages", sub.ReceiveSettings.MaxOutstandingMessages, "drain", o.Drain)
	if err := rc.Receive(ctx, sub); err != nil {
		return fmt.Errorf("receive: %w", err)
	}
	log.Info("worker: drained and stopped")
	return nil
}
