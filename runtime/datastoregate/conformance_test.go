package datastoregate_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"github.com/oncegate/oncegate/internal/dsfake"
	"github.com/oncegate/oncegate/runtime/datastoregate"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gatetest"
)

func newClock() *gatetest.Clock {
	return gatetest.NewClock(gatetest.Epoch)
}

// harness makes Stores in fresh namespaces on one client.
type harness struct {
	c     *datastore.Client
	clock *gatetest.Clock
}

func (h *harness) MakeBackend(context.Context, *testing.T) (gate.Backend, error) {
	return datastoregate.New(h.c, &datastoregate.Options{Namespace: uniqueNamespace(), Now: h.clock.Now, RetryBackoff: time.Millisecond})
}

func (h *harness) Advance(_ *testing.T, d time.Duration) { h.clock.Advance(d) }
func (h *harness) Close()                                {}

func uniqueNamespace() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "gatetest-" + hex.EncodeToString(b[:])
}

func run(t *testing.T, c *datastore.Client) {
	gatetest.RunConformanceTests(t, func(context.Context, *testing.T) (gatetest.Harness, error) {
		return &harness{c: c, clock: newClock()}, nil
	})
}

func TestConformance(t *testing.T) {
	run(t, dsfake.Start(t).Client(t, ""))
}

func TestConformanceNamedDatabase(t *testing.T) {
	run(t, dsfake.Start(t).Client(t, "records"))
}

// TestConformanceEmulator runs the suite against the Datastore emulator (or any
// Datastore) that DATASTORE_EMULATOR_HOST names, in the project
// DATASTORE_PROJECT_ID (default oncegate-test). See the package doc.
func TestConformanceEmulator(t *testing.T) {
	if os.Getenv("DATASTORE_EMULATOR_HOST") == "" {
		t.Skip("DATASTORE_EMULATOR_HOST is not set; the fake-backed TestConformance covers the suite")
	}
	project := os.Getenv("DATASTORE_PROJECT_ID")
	if project == "" {
		project = "oncegate-test"
	}
	c, err := datastore.NewClient(context.Background(), project)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	run(t, c)
}
