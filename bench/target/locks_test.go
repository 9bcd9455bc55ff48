package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestLocked: the function runs between lock and unlock, on the message id; a
// lock held elsewhere or a failed unlock answers 503.
func TestLocked(t *testing.T) {
	var calls []string
	ok := func(_ context.Context, key string, _ time.Duration) (func(context.Context) error, error) {
		calls = append(calls, "lock "+key)
		return func(context.Context) error { calls = append(calls, "unlock"); return nil }, nil
	}
	held := func(context.Context, string, time.Duration) (func(context.Context) error, error) {
		return nil, errors.New("held")
	}
	lost := func(context.Context, string, time.Duration) (func(context.Context) error, error) {
		return func(context.Context) error { return errors.New("lost") }, nil
	}
	for _, c := range []struct {
		name   string
		l      locker
		status int
		calls  int
	}{
		{"locked and unlocked", ok, http.StatusNoContent, 2},
		{"held by another", held, http.StatusServiceUnavailable, 0},
		{"lost before unlock", lost, http.StatusServiceUnavailable, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls = nil
			rec := httptest.NewRecorder()
			locked(c.l, "p:", time.Minute).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader([]byte(pushBody))))
			if got := rec.Result().StatusCode; got != c.status {
				t.Errorf("status %d, want %d", got, c.status)
			}
			if len(calls) != c.calls || c.calls > 0 && calls[0] != "lock p:2070443601311540" {
				t.Errorf("calls %q, want %d starting with the lock on p:<message id>", calls, c.calls)
			}
		})
	}
}
