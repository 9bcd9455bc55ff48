package push_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/push"
)

// A push handler that sends each order at most once. The second delivery of the
// same message is a duplicate: acked (204) without running the work again.
func ExampleNewHandler() {
	quiet := slog.New(slog.DiscardHandler)
	g, err := gate.New(memgate.New(nil), &gate.Options{Namespace: "orders", Logger: quiet})
	if err != nil {
		panic(err)
	}
	h, err := push.NewHandler(g, func(ctx context.Context, m *push.Message, c gate.Claim) error {
		// Downstream writes carry c.Key as the Idempotency-Key and c.Fence as the
		// fencing token.
		fmt.Printf("send %s (key %s, fence %d)\n", m.Data, c.Key, c.Fence)
		return nil
	}, nil)
	if err != nil {
		panic(err)
	}
	body := `{"message":{"data":"UE8tMTA0Mg==","messageId":"2070443601311540"},"subscription":"projects/p/subscriptions/orders-push","deliveryAttempt":1}`
	for range 2 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)))
		fmt.Println(rec.Code, rec.Header().Get(push.HeaderOutcome))
	}
	// Output:
	// send PO-1042 (key orders:2070443601311540, fence 1)
	// 204 ran
	// 204 duplicate
}
