// Package function is the reference worker as a Cloud Function (gen2) behind an
// Eventarc Pub/Sub trigger, served by functions-framework-go: the same body as
// examples/cloudrun, through the CloudEvent adapter, configured by the same
// ONCEGATE_* environment contract. Deploy with entry point "OnMessage".
package function

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"sync"

	"github.com/GoogleCloudPlatform/functions-framework-go/functions"

	"github.com/oncegate/oncegate/examples/cloudrun/worker"
	"github.com/oncegate/oncegate/runtime/cloudevent"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"

	// Every backend, so ONCEGATE_BACKEND may name any (the worker package
	// links them too); a function of your own on one backend imports only its
	// package (e.g. gateenv/datastoreenv).
	_ "github.com/oncegate/oncegate/runtime/gateenv/allbackends"
)

func init() {
	functions.HTTP("OnMessage", onMessage)
}

var (
	once    sync.Once
	handler http.Handler
	initErr error
)

// build configures the handler on the first request, so a bad environment
// answers 500 (a nack: the message is kept) instead of crashing the instance.
func build() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	cfg, err := gateenv.New(context.Background(), &gateenv.Options{Logger: log})
	if err != nil {
		initErr = err
		return
	}
	g, err := cfg.NewGate()
	if err != nil {
		initErr = err
		return
	}
	supplier := os.Getenv(worker.EnvSupplierURL)
	handler, initErr = cloudevent.NewHandler(g, func(ctx context.Context, e *cloudevent.Event, c gate.Claim) error {
		data := e.CloudEvent.Data()
		if e.Message != nil {
			data = e.Message.Data
		}
		return worker.Forward(ctx, http.DefaultClient, supplier, data, c)
	}, &cloudevent.Options{AdapterOptions: cfg.AdapterOptions()})
}

func onMessage(w http.ResponseWriter, r *http.Request) {
	once.Do(build)
	if initErr != nil {
		slog.Error("oncegate: configuration", "err", initErr)
		http.Error(w, "worker misconfigured", http.StatusInternalServerError)
		return
	}
	handler.ServeHTTP(w, r)
}
