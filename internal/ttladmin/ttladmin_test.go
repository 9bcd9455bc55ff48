package ttladmin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	firestore "google.golang.org/api/firestore/v1"
	"google.golang.org/api/option"
)

// request is one call the fake Admin API saw.
type request struct {
	method, path string
	query        url.Values
	body         string
}

// fakeAdmin answers the Admin API's field calls with reply and records them.
type fakeAdmin struct {
	mu    sync.Mutex
	seen  []request
	reply string
	code  int
}

func (f *fakeAdmin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.seen = append(f.seen, request{r.Method, r.URL.EscapedPath(), r.URL.Query(), string(b)})
	reply, code := f.reply, f.code
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if code != 0 {
		w.WriteHeader(code)
	}
	_, _ = io.WriteString(w, reply)
}

func (f *fakeAdmin) requests() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.seen...)
}

func newService(t *testing.T, f *fakeAdmin) *firestore.Service {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	svc, err := firestore.NewService(context.Background(), option.WithEndpoint(srv.URL), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

var policy = Policy{Project: "acme-prod", Kind: "OncegateRecord"}

// TestEnableRequestShape pins the one request a Datastore-mode database
// accepts: a PATCH of the field with updateMask=ttlConfig and a body of only
// an empty ttlConfig. An index configuration, or a missing mask (which writes
// the whole field, indexing included), is what the database refuses.
func TestEnableRequestShape(t *testing.T) {
	tests := []struct {
		name string
		p    Policy
		path string
	}{
		{"default database", policy, "/v1/projects/acme-prod/databases/(default)/collectionGroups/OncegateRecord/fields/expires_at"},
		{"named database", Policy{Project: "acme-prod", Database: "gates", Kind: "Orders"},
			"/v1/projects/acme-prod/databases/gates/collectionGroups/Orders/fields/expires_at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeAdmin{reply: `{"name":"projects/acme-prod/databases/(default)/operations/op-1"}`}
			op, err := Enable(context.Background(), newService(t, f), tt.p)
			if err != nil {
				t.Fatal(err)
			}
			if op != "projects/acme-prod/databases/(default)/operations/op-1" {
				t.Errorf("operation = %q", op)
			}
			reqs := f.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1: %+v", len(reqs), reqs)
			}
			r := reqs[0]
			if r.method != http.MethodPatch || r.path != tt.path {
				t.Errorf("request = %s %s, want PATCH %s", r.method, r.path, tt.path)
			}
			if got := r.query["updateMask"]; len(got) != 1 || got[0] != "ttlConfig" {
				t.Errorf("updateMask = %q, want exactly [ttlConfig]", got)
			}
			var body map[string]json.RawMessage
			if err := json.Unmarshal([]byte(r.body), &body); err != nil {
				t.Fatalf("body %q: %v", r.body, err)
			}
			if len(body) != 1 || string(body["ttlConfig"]) != "{}" {
				t.Errorf("body = %s, want exactly {\"ttlConfig\":{}} (no indexConfig, no name)", r.body)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		reply string
		want  State
		msg   string
	}{
		{`{"name":"n","ttlConfig":{"state":"ACTIVE"}}`, StateActive, ""},
		{`{"name":"n","ttlConfig":{"state":"CREATING"}}`, StateCreating, "still being processed"},
		{`{"name":"n","ttlConfig":{"state":"NEEDS_REPAIR"}}`, StateNeedsRepair, "run `oncegate ttl enable` again"},
		{`{"name":"n","indexConfig":{"usesAncestorConfig":true}}`, StateOff, "has no TTL policy; run `oncegate ttl enable`"},
	}
	for _, tt := range tests {
		t.Run(string(tt.want), func(t *testing.T) {
			f := &fakeAdmin{reply: tt.reply}
			got, err := Check(context.Background(), newService(t, f), policy)
			if got != tt.want {
				t.Errorf("state = %q, want %q", got, tt.want)
			}
			if tt.msg == "" {
				if err != nil {
					t.Errorf("error = %v", err)
				}
			} else if !errors.Is(err, ErrNotActive) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error = %v, want ErrNotActive containing %q", err, tt.msg)
			}
			r := f.requests()
			if len(r) != 1 || r[0].method != http.MethodGet || r[0].path != "/v1/projects/acme-prod/databases/(default)/collectionGroups/OncegateRecord/fields/expires_at" {
				t.Errorf("requests = %+v, want one GET of the field", r)
			}
		})
	}
}

func TestAPIErrorWrapped(t *testing.T) {
	f := &fakeAdmin{code: http.StatusBadRequest, reply: `{"error":{"code":400,"message":"Single-field indexing modes cannot be updated in Datastore mode databases."}}`}
	_, err := Enable(context.Background(), newService(t, f), policy)
	if err == nil || !strings.Contains(err.Error(), "Single-field indexing modes") || errors.Is(err, ErrNotActive) {
		t.Errorf("error = %v", err)
	}
}

func TestValidate(t *testing.T) {
	for _, p := range []Policy{
		{Project: "", Kind: "K"},
		{Project: "Acme", Kind: "K"},
		{Project: "acme-prod", Kind: ""},
		{Project: "acme-prod", Kind: "a/b"},
		{Project: "acme-prod", Database: "x y", Kind: "K"},
	} {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v: no error", p)
		}
		if _, err := Enable(context.Background(), nil, p); err == nil {
			t.Errorf("Enable(%+v) sent a request", p)
		}
	}
	if err := (Policy{Project: "example.com:acme-prod", Kind: "K"}).Validate(); err != nil {
		t.Errorf("domain-scoped project: %v", err)
	}
}
