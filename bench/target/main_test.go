package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
)

const pushBody = `{"message":{"data":"eyJwbyI6IlBPLTEwNDIifQ==","messageId":"2070443601311540","publishTime":"2026-11-30T10:15:02.123Z"},"subscription":"projects/p/subscriptions/s"}`

func TestBare(t *testing.T) {
	probes := 0
	probe := func(context.Context) error { probes++; return nil }
	failing := func(context.Context) error { return errors.New("down") }
	for _, c := range []struct {
		name   string
		h      http.Handler
		body   string
		status int
		probes int
	}{
		{"bare", bare(nil), pushBody, http.StatusNoContent, 0},
		{"floor makes two round trips", bare(probe), pushBody, http.StatusNoContent, 2},
		{"malformed", bare(nil), `{"message":`, http.StatusBadRequest, 0},
		{"store down", bare(failing), pushBody, http.StatusServiceUnavailable, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			probes = 0
			rec := httptest.NewRecorder()
			c.h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader([]byte(c.body))))
			if got := rec.Result().StatusCode; got != c.status {
				t.Errorf("status %d, want %d", got, c.status)
			}
			if probes != c.probes {
				t.Errorf("%d store round trips, want %d", probes, c.probes)
			}
		})
	}
}

func TestProcessStats(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc/self/status on this system")
	}
	if rss() <= 0 {
		t.Error("rss() = 0 on a system with /proc/self/status")
	}
	busy := 0
	for i := range 1_000_000 {
		busy += i
	}
	if cpuSeconds() <= 0 {
		t.Errorf("cpuSeconds() = 0 after some work (%d)", busy)
	}
}
