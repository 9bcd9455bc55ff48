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

// TestIdempotentSupplierAbsorbsRepeats: a repeat of a committed key is answered
// 200 and counted as a repeat, not a second order; overlapping calls of one
// key both commit (the key is looked up on arrival); calls name their worker.
func TestIdempotentSupplierAbsorbsRepeats(t *testing.T) {
	s := supplier.NewIdempotent()
	srv := httptest.NewServer(s)
	defer srv.Close()
	post := func(path, key, body string) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post("/w/1", "a", `{"order":"a"}`); got != 201 {
		t.Fatalf("first call: %d, want 201", got)
	}
	if got := post("/w/2", "a", `{"order":"a"}`); got != 200 {
		t.Fatalf("repeat: %d, want 200 (absorbed)", got)
	}
	done := make(chan int, 2)
	for range 2 {
		go func() { done <- post("/w/0", "b", `{"order":"b","slow_ms":300}`) }()
	}
	<-done
	<-done
	r := s.Report()
	if r.Orders != 2 || r.Repeats != 1 || r.Duplicates != 1 {
		t.Fatalf("report = %+v; want 2 orders, 1 absorbed repeat, 1 order held twice (the overlap)", r)
	}
	calls := s.Calls()
	if len(calls) != 4 || calls[0].Worker != 1 || !calls[0].Committed || calls[1].Worker != 2 || !calls[1].Absorbed || calls[2].Worker != 0 {
		t.Fatalf("calls = %+v", calls)
	}
}
