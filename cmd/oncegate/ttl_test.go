package main

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/oncegate/oncegate/internal/ttladmin"
)

// TestTTLVerbs runs enable and check against a fake Admin API: enable sends the
// masked PATCH, check fails until the policy is ACTIVE.
func TestTTLVerbs(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	state := "CREATING"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.Method+" "+r.URL.EscapedPath()+" mask="+r.URL.Query().Get("updateMask")+" "+strings.TrimSpace(string(b)))
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPatch {
			_, _ = io.WriteString(w, `{"name":"projects/acme-prod/databases/gates/operations/op-7"}`)
			return
		}
		_, _ = io.WriteString(w, `{"ttlConfig":{"state":"`+state+`"}}`)
	}))
	defer srv.Close()
	flags := []string{"--project", "acme-prod", "--database", "gates", "--kind", "Orders", "--endpoint", srv.URL}
	field := "/v1/projects/acme-prod/databases/gates/collectionGroups/Orders/fields/expires_at"

	out, err := run(t, append([]string{"ttl", "enable"}, flags...)...)
	if err != nil || !strings.Contains(out, "operation projects/acme-prod/databases/gates/operations/op-7") {
		t.Fatalf("enable: %v\n%s", err, out)
	}
	out, err = run(t, append([]string{"ttl", "check"}, flags...)...)
	if !errors.Is(err, ttladmin.ErrNotActive) || !strings.Contains(out, ": CREATING") {
		t.Fatalf("check while creating: %v\n%s", err, out)
	}
	mu.Lock()
	state = "ACTIVE"
	mu.Unlock()
	out, err = run(t, append([]string{"ttl", "check"}, flags...)...)
	if err != nil || !strings.Contains(out, ": ACTIVE") {
		t.Fatalf("check when active: %v\n%s", err, out)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"PATCH " + field + ` mask=ttlConfig {"ttlConfig":{}}`, "GET " + field + " mask= ", "GET " + field + " mask= "}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
	if _, err := run(t, "ttl", "check", "--kind", "Orders"); err == nil || !strings.Contains(err.Error(), "project") {
		t.Errorf("check without --project: %v", err)
	}
}
