package worker_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/oncegate/oncegate/examples/cloudrun/worker"
	"github.com/oncegate/oncegate/internal/oidctest"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/push"
)

const (
	audience = "https://worker.example.run.app/"
	account  = "push@example-project.iam.gserviceaccount.com"
)

var quiet = slog.New(slog.DiscardHandler)

// supplierCounter is a supplier that counts the calls reaching it.
func supplierCounter(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// TestWorkerVerifiesOIDC configures the reference worker the way Cloud Run does
// (gateenv with ONCEGATE_OIDC_AUDIENCE and ONCEGATE_OIDC_SERVICE_ACCOUNT) and
// sends pushes without a valid token: each is answered 401 or 403 with no
// record written and no supplier call. A valid token, sent last, runs.
func TestWorkerVerifiesOIDC(t *testing.T) {
	ks := oidctest.New(t)
	vars := map[string]string{"ONCEGATE_BACKEND": "memory", "ONCEGATE_NAMESPACE": "orders", "ONCEGATE_LEASE": "60s", "ONCEGATE_WORK_DEADLINE": "30s",
		gateenv.EnvOIDCAudience: audience, gateenv.EnvOIDCServiceAccount: account}
	cfg, err := gateenv.New(context.Background(), &gateenv.Options{Getenv: func(k string) string { return vars[k] },
		Logger: quiet, OIDCValidator: ks.Validator(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer cfg.Close()
	g, err := cfg.NewGate()
	if err != nil {
		t.Fatal(err)
	}
	sup, calls := supplierCounter(t)
	h, err := worker.Handler(g, worker.Config{SupplierURL: sup.URL}, cfg.PushOptions())
	if err != nil {
		t.Fatal(err)
	}
	store := cfg.Backend.(*memgate.Store)
	wrongAccount := oidctest.PushClaims(audience, "attacker@evil.example")
	for _, tc := range []struct {
		name, auth string
		status     int
	}{
		{"no header", "", http.StatusUnauthorized},
		{"bearer garbage", "Bearer garbage", http.StatusUnauthorized},
		{"alg none", "Bearer " + oidctest.JWT(t, "none", ks.KID, nil, nil, oidctest.PushClaims(audience, account)), http.StatusUnauthorized},
		{"basic", "Basic " + base64.StdEncoding.EncodeToString([]byte(account+":x")), http.StatusUnauthorized},
		{"another account", "Bearer " + ks.Sign(t, wrongAccount), http.StatusForbidden},
		{"valid", "Bearer " + ks.Sign(t, oidctest.PushClaims(audience, account)), http.StatusNoContent},
	} {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"message":{"messageId":"m-1","data":"e30="}}`))
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.status {
			t.Fatalf("%s: status %d, want %d", tc.name, rec.Code, tc.status)
		}
		if tc.status != http.StatusNoContent && (store.Len() != 0 || calls.Load() != 0) {
			t.Fatalf("%s: %d records, %d supplier calls; want none", tc.name, store.Len(), calls.Load())
		}
	}
	if store.Len() != 1 || calls.Load() != 1 {
		t.Errorf("valid token: %d records, %d supplier calls; want 1 and 1", store.Len(), calls.Load())
	}
}

// TestMainRefusesUnverifiedPushes checks the worker does not start without the
// OIDC settings or the explicit local opt-out.
func TestMainRefusesUnverifiedPushes(t *testing.T) {
	sup, _ := supplierCounter(t)
	vars := map[string]string{"ONCEGATE_BACKEND": "memory", "ONCEGATE_NAMESPACE": "orders", "ONCEGATE_LEASE": "60s", "ONCEGATE_WORK_DEADLINE": "30s",
		worker.EnvSupplierURL: sup.URL, worker.EnvPort: "0"}
	err := worker.Main(context.Background(), func(k string) string { return vars[k] }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), gateenv.EnvOIDCAudience) || !strings.Contains(err.Error(), gateenv.EnvOIDCDisabled) {
		t.Fatalf("Main = %v, want an error naming %s and %s", err, gateenv.EnvOIDCAudience, gateenv.EnvOIDCDisabled)
	}
}

// TestKeyAttributeOfUnwrappedPush checks ONCEGATE_KEY_ATTRIBUTE=orderId finds
// the attribute in an unwrapped push, where it arrives as an HTTP header
// ("orderId: PO-1043", canonicalised by Go to "Orderid"): the message runs
// under that key (it answered 500 no-key when attribute names were matched
// exactly after lower-casing), and so does the wrapped form of the same
// message. A wrapped attribute of another case is another attribute.
func TestKeyAttributeOfUnwrappedPush(t *testing.T) {
	keyAttrStore := memgate.New(nil)
	g, err := gate.New(keyAttrStore, &gate.Options{Namespace: "orders", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	sup, _ := supplierCounter(t)
	keyAttrHandler, err := worker.Handler(g, worker.Config{SupplierURL: sup.URL, KeyAttribute: "orderId"}, &push.Options{AdapterOptions: push.AdapterOptions{Logger: quiet}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "unwrapped.http"))
	if err != nil {
		t.Fatal(err)
	}
	// The fixture's shape, with the publisher's camel-case attribute added.
	raw = bytes.Replace(raw, []byte("po_id: PO-1043\n"), []byte("po_id: PO-1043\norderId: PO-1043\n"), 1)
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(req.Body)
	unwrapped := func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(bytes.TrimSpace(body)))
		r.Header = req.Header.Clone()
		return r
	}
	wrapped := func(attr string) *http.Request {
		return httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"message":{"messageId":"m-9","data":"e30=","attributes":{"`+attr+`":"PO-1043"}}}`))
	}
	for _, tc := range []struct {
		name    string
		req     func() *http.Request
		status  int
		outcome string
	}{
		{"unwrapped", unwrapped, http.StatusNoContent, "ran"},
		{"unwrapped again", unwrapped, http.StatusNoContent, "duplicate"},
		{"wrapped, same key", func() *http.Request { return wrapped("orderId") }, http.StatusNoContent, "duplicate"},
		{"wrapped, other case", func() *http.Request { return wrapped("orderid") }, http.StatusInternalServerError, "no-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			keyAttrHandler.ServeHTTP(rec, tc.req())
			if rec.Code != tc.status || rec.Header().Get(push.HeaderOutcome) != tc.outcome {
				t.Fatalf("status %d %s, want %d %s", rec.Code, rec.Header().Get(push.HeaderOutcome), tc.status, tc.outcome)
			}
		})
	}
	if _, ok, _ := keyAttrStore.Inspect(context.Background(), "orders:PO-1043"); !ok || keyAttrStore.Len() != 1 {
		t.Errorf("want one record, orders:PO-1043; have %d", keyAttrStore.Len())
	}
}

// TestSupplierURLRefusedAtStart: URLs every delivery would fail on are
// refused when the handler is built, naming SUPPLIER_URL and the form.
func TestSupplierURLRefusedAtStart(t *testing.T) {
	g, err := gate.New(memgate.New(nil), &gate.Options{Namespace: "orders", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"", false}, {"file:///etc/passwd", false}, {"supplier.internal:9000/orders", false},
		{"//supplier.internal/orders", false}, {"http://supplier.internal/orders\nX-Injected: 1", false},
		{"http://supplier\r.internal/", false}, {"ftp://supplier.internal/", false}, {"http:///orders", false},
		{"mailto:orders@example.com", false},
		{"http://127.0.0.1:9000/orders", true}, {"https://supplier.example/orders?x=1", true},
	} {
		_, err := worker.Handler(g, worker.Config{SupplierURL: tc.url}, &push.Options{AdapterOptions: push.AdapterOptions{Logger: quiet}})
		if tc.ok != (err == nil) || err != nil && (!strings.Contains(err.Error(), "SUPPLIER_URL") || !strings.Contains(err.Error(), "http://")) {
			t.Errorf("SUPPLIER_URL %q: %v (accepted: %v, want %v)", tc.url, err, err == nil, tc.ok)
		}
	}
}
