package push_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/push"
)

func BenchmarkParseEnvelope(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 20} {
		body := envelope("2070443601311540", bytes.Repeat([]byte("x"), size), 3)
		b.Run(strconv.Itoa(size)+"B", func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := push.ParseEnvelope(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHandler measures the adapter's overhead per delivery on the
// in-memory backend, with a 1 KiB payload: read, parse, claim, body, complete,
// log (discarded), metrics and spans (no-op providers). GateLockFloor is the
// same fresh-key gate.Lock without the adapter, and HTTPTestFloor the
// httptest request and recorder around a bare 204 handler, measured in the
// same run: the adapter's own cost is Ran − GateLockFloor − HTTPTestFloor.
func BenchmarkHandler(b *testing.B) {
	quiet := slog.New(slog.DiscardHandler)
	g, _ := gate.New(memgate.New(nil), &gate.Options{Namespace: "bench", Logger: quiet})
	h, _ := push.NewHandler(g, func(context.Context, *push.Message, gate.Claim) error { return nil }, nil)
	data := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("x"), 1<<10))
	body := func(id string) []byte {
		return []byte(`{"message":{"data":"` + data + `","messageId":"` + id + `","publishTime":"2026-11-30T10:15:02.123Z"},"subscription":"projects/p/subscriptions/s","deliveryAttempt":1}`)
	}
	serve := func(b *testing.B, body []byte) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)))
		if rec.Code != http.StatusNoContent {
			b.Fatalf("status %d", rec.Code)
		}
	}
	i := 0 // shared by every run of the sub-benchmarks (-count), so keys stay fresh
	b.Run("Ran", func(b *testing.B) {
		for b.Loop() {
			i++
			serve(b, body("r"+strconv.Itoa(i)))
		}
	})
	b.Run("Duplicate", func(b *testing.B) {
		dup := body("dup")
		serve(b, dup)
		for b.Loop() {
			serve(b, dup)
		}
	})
	b.Run("HTTPTestFloor", func(b *testing.B) {
		bare := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
		for b.Loop() {
			i++ // built as Ran builds its body, so the harness cancels out
			rec := httptest.NewRecorder()
			bare.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body("h"+strconv.Itoa(i)))))
			if rec.Code != http.StatusNoContent {
				b.Fatalf("status %d", rec.Code)
			}
		}
	})
	b.Run("GateLockFloor", func(b *testing.B) {
		for b.Loop() {
			i++
			if err := g.Lock(context.Background(), "f"+strconv.Itoa(i), func(context.Context, gate.Claim) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
}
