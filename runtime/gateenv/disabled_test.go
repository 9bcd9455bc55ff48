package gateenv_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/push"
)

// TestDisabledThroughPush checks ONCEGATE_DISABLED=1 reaches the push handler:
// every delivery runs, nothing is claimed, one warning is logged.
func TestDisabledThroughPush(t *testing.T) {
	var logs bytes.Buffer
	c, _, err := load(t, env{"ONCEGATE_DISABLED": "1", "ONCEGATE_NAMESPACE": "orders", "ONCEGATE_OIDC_DISABLED": "1"})
	if err != nil {
		t.Fatal(err)
	}
	c.Gate.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	g, err := c.NewGate()
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	h, err := push.NewHandler(g, func(context.Context, *push.Message, gate.Claim) error { runs++; return nil }, c.PushOptions())
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"message":{"messageId":"1"}}`)))
		if rec.Code != http.StatusNoContent {
			t.Fatalf("status %d", rec.Code)
		}
	}
	if runs != 2 || c.Backend.(*memgate.Store).Len() != 0 {
		t.Errorf("runs %d, records %d", runs, c.Backend.(*memgate.Store).Len())
	}
	if n := strings.Count(logs.String(), "ONCEGATE_DISABLED"); n != 1 {
		t.Errorf("warning logged %d times:\n%s", n, logs.String())
	}
}
