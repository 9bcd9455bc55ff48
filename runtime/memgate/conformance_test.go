package memgate_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gatetest"
	"github.com/oncegate/oncegate/runtime/memgate"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type harness struct{ clock *fakeClock }

func (h *harness) MakeBackend(context.Context, *testing.T) (gate.Backend, error) {
	return memgate.New(&memgate.Options{Now: h.clock.Now}), nil
}
func (h *harness) Advance(_ *testing.T, d time.Duration) { h.clock.Advance(d) }
func (h *harness) Close()                                {}

func TestConformance(t *testing.T) {
	gatetest.RunConformanceTests(t, func(context.Context, *testing.T) (gatetest.Harness, error) {
		return &harness{clock: &fakeClock{now: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}}, nil
	})
}
