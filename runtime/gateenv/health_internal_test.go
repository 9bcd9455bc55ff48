package gateenv

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHealth: Serve answers its health path itself (GET and HEAD, no token,
// the handler never sees it) and passes everything else, and every request
// when the path is "-", to the handler.
func TestHealth(t *testing.T) {
	passed := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	tests := []struct {
		path, method, target string
		want                 int
	}{
		{"", http.MethodGet, "/healthz", http.StatusOK},
		{"", http.MethodHead, "/healthz", http.StatusOK},
		{"", http.MethodPost, "/healthz", http.StatusTeapot},
		{"", http.MethodGet, "/", http.StatusTeapot},
		{"", http.MethodGet, "/healthz/x", http.StatusTeapot},
		{"/ready", http.MethodGet, "/ready", http.StatusOK},
		{"/ready", http.MethodGet, "/healthz", http.StatusTeapot},
		{"-", http.MethodGet, "/healthz", http.StatusTeapot},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		health(passed, tt.path).ServeHTTP(rec, httptest.NewRequest(tt.method, tt.target, nil))
		if rec.Code != tt.want {
			t.Errorf("HealthPath %q: %s %s = %d, want %d", tt.path, tt.method, tt.target, rec.Code, tt.want)
		}
	}
}
