package cloudevent_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/GoogleCloudPlatform/functions-framework-go/functions"

	"github.com/oncegate/oncegate/runtime/cloudevent"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/push"
)

// An Eventarc Pub/Sub event in binary content mode, delivered twice.
func ExampleNewHandler() {
	g, _ := gate.New(memgate.New(nil), &gate.Options{Namespace: "orders", Logger: slog.New(slog.DiscardHandler)})
	h, err := cloudevent.NewHandler(g, func(ctx context.Context, e *cloudevent.Event, c gate.Claim) error {
		fmt.Printf("%s: %s (key %s, fence %d)\n", e.CloudEvent.Type(), e.Message.Data, c.Key, c.Fence)
		return nil
	}, nil)
	if err != nil {
		panic(err)
	}
	body := `{"message":{"data":"eyJwbyI6IlBPLTEwNDQifQ==","messageId":"2070443601311544"},"subscription":"projects/p/subscriptions/eventarc-orders"}`
	for range 2 {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Ce-Specversion", "1.0")
		req.Header.Set("Ce-Type", cloudevent.PubSubMessagePublished)
		req.Header.Set("Ce-Source", "//pubsub.googleapis.com/projects/p/topics/orders")
		req.Header.Set("Ce-Id", "2070443601311544")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Println(rec.Code, rec.Header().Get(push.HeaderOutcome))
	}
	// Output:
	// google.cloud.pubsub.topic.v1.messagePublished: {"po":"PO-1044"} (key orders:2070443601311544, fence 1)
	// 204 ran
	// 204 duplicate
}

// Registering the handler with functions-framework-go (Cloud Functions gen2).
// Register it as an HTTP function so its 503 and 204 answers reach Eventarc; a
// CloudEvent function can only fail with 500.
func ExampleNewHandler_functionsFramework() {
	g, _ := gate.New(memgate.New(nil), &gate.Options{Namespace: "orders"})
	h, err := cloudevent.NewHandler(g, func(ctx context.Context, e *cloudevent.Event, c gate.Claim) error {
		return nil // the side effect, carrying c.Fence
	}, nil)
	if err != nil {
		panic(err)
	}
	functions.HTTP("OnOrder", h.ServeHTTP) // deploy with --entry-point=OnOrder
}
