package supplier_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/supplier"
)

func call(t *testing.T, s *supplier.Supplier, ctx context.Context, key, fence, body string) int {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)).WithContext(ctx)
	r.Header.Set("Idempotency-Key", key)
	r.Header.Set("X-Fencing-Token", fence)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w.Result().StatusCode
}

func TestSupplierCountsAndCues(t *testing.T) {
	s := supplier.New()
	ctx := context.Background()
	for _, tc := range []struct {
		key, fence, body string
		want             int
	}{
		{"a", "1", `{"order":"a"}`, 201},
		{"a", "2", `{"order":"a"}`, 201}, // a duplicate order
		{"a", "1", `{"order":"a"}`, 409}, // a stale fence
		{"f", "1", `{"order":"f","fail_times":2}`, 503},
		{"f", "1", `{"order":"f","fail_times":2}`, 503},
		{"f", "1", `{"order":"f","fail_times":2}`, 201},
		{"p", "1", `{"order":"p","poison":true}`, 422},
	} {
		if got := call(t, s, ctx, tc.key, tc.fence, tc.body); got != tc.want {
			t.Fatalf("%s %s: status %d, want %d", tc.key, tc.body, got, tc.want)
		}
	}
	r := s.Report()
	if r.Calls != 7 || r.Orders != 2 || r.Duplicates != 1 || r.StaleFences != 1 {
		t.Fatalf("report = %+v", r)
	}
}

func TestSupplierDoesNotCommitWhenCallerGaveUp(t *testing.T) {
	s := supplier.New()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	call(t, s, ctx, "slow", "1", `{"order":"slow","slow_ms":5000}`)
	if s.Accepted("slow") != 0 {
		t.Fatal("an abandoned call was committed")
	}
	if got := call(t, s, context.Background(), "slow", "2", `{"order":"slow","slow_ms":5000}`); got != 201 {
		t.Fatalf("second call: %d, want 201 without the delay", got)
	}
}
