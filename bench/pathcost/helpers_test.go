package pathcost

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/oncegate/oncegate/bench/roundtrip"
	"github.com/oncegate/oncegate/bench/stores"
	"github.com/oncegate/oncegate/internal/pushbridge"
	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/push"
)

// openStore opens kind on the test's servers (testenv) under a unique name,
// dropped when the test ends. maxConns caps the pool (0: the driver default).
func openStore(t *testing.T, kind stores.Kind, wire bool, maxConns int) *stores.Store {
	t.Helper()
	cfg := stores.Config{Name: testenv.UniqueName(t, "pc"), Wire: wire, MaxConns: maxConns, Drop: true}
	switch kind {
	case stores.SQLite:
		cfg.DSN = filepath.Join(t.TempDir(), "records.db")
	case stores.Postgres:
		cfg.DSN = testenv.Postgres(t)
	case stores.MySQL:
		cfg.DSN = testenv.MySQL(t)
	case stores.Redis:
		cfg.DSN = testenv.Redis(t)
	}
	s, err := stores.Open(context.Background(), kind, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close %s: %v", kind, err)
		}
	})
	return s
}

// instance is one worker instance's push handler over a store, with its port
// calls counted in calls.
type instance struct {
	h     http.Handler
	calls *roundtrip.Counter
}

// newInstance builds a push handler over s as a worker would (push.NewHandler
// over a gate), running body for each message; cacheSize is the gate's
// terminal cache (0: off).
func newInstance(t *testing.T, s *stores.Store, cacheSize int, body push.HandlerFunc) instance {
	t.Helper()
	calls := new(roundtrip.Counter)
	quiet := slog.New(slog.DiscardHandler)
	// The store timeout is generous: these tests count round trips, and 64
	// contenders on one SQLite file under -race on a loaded machine can wait
	// longer than the default 2 s claim budget, which would answer
	// store-unavailable after fewer trips than the path under test takes.
	g, err := gate.New(roundtrip.CountBackend(s.Backend, calls), &gate.Options{Namespace: "bench", CacheSize: cacheSize,
		StoreTimeout: 30 * time.Second, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if body == nil {
		body = func(context.Context, *push.Message, gate.Claim) error { return nil }
	}
	h, err := push.NewHandler(g, body, &push.Options{AdapterOptions: push.AdapterOptions{Logger: quiet}})
	if err != nil {
		t.Fatal(err)
	}
	return instance{h: h, calls: calls}
}

// envelope is a real wrapped push body for message id.
func envelope(t testing.TB, id string) []byte {
	t.Helper()
	b, err := pushbridge.Envelope(&pubsubpb.PubsubMessage{
		Data:        []byte(`{"order":"PO-1042","qty":3}`),
		MessageId:   id,
		PublishTime: timestamppb.Now(),
		Attributes:  map[string]string{"region": "eu"},
	}, "projects/bench/subscriptions/orders-push", 1)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// deliver posts body to in with a context carrying c, so every round trip the
// delivery makes is counted in c too, and returns the HTTP status.
func deliver(in instance, body []byte, c *roundtrip.Counter) int {
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req = req.WithContext(roundtrip.WithCounter(req.Context(), c))
	rec := httptest.NewRecorder()
	in.h.ServeHTTP(rec, req)
	return rec.Result().StatusCode
}

// measured is what one delivery cost.
type measured struct {
	status int
	calls  int64
	trips  int64
	wire   int64
	detail string
}

// measure delivers body through in alone (nothing else may use s meanwhile)
// and counts its cost.
func measure(t *testing.T, s *stores.Store, in instance, body []byte) measured {
	t.Helper()
	s.ResetCounts()
	c := new(roundtrip.Counter)
	status := deliver(in, body, c)
	m := measured{status: status, calls: c.Sum(roundtrip.PortCalls...), trips: s.Kind.Trips(c), wire: -1}
	if s.Trips() != m.trips {
		t.Errorf("%s: the store counted %d round trips, the delivery's context %d: something else used the store", s.Kind, s.Trips(), m.trips)
	}
	if s.Kind != stores.Memory && s.Kind != stores.SQLite && s.Kind != stores.Datastore {
		m.wire = s.WireTrips()
	}
	if s.Kind == stores.Datastore {
		if got := int64(s.Fake.Total()); got != m.trips {
			t.Errorf("datastore: the fake served %d RPCs, the client's interceptor counted %d", got, m.trips)
		}
	}
	m.detail = c.String()
	return m
}
