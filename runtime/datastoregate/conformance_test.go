package datastoregate_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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

// TestConformance runs the gatetest contract suite on every Datastore the tests
// have: TestConformance/fake/... on internal/dsfake (default and named database),
// TestConformance/emulator/... on Google's Datastore emulator and
// TestConformance/firestore-emulator/... on the Firestore emulator in Datastore
// mode (internal/testenv starts both; they skip without the emulator outside CI).
func TestConformance(t *testing.T) {
	for _, b := range datastores {
		t.Run(b.name, func(t *testing.T) { run(t, b.client(t)) })
	}
	t.Run("fake-named-database", func(t *testing.T) { run(t, dsfake.Start(t).Client(t, "records")) })
}
