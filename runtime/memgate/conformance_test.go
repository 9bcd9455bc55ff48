package memgate_test

import (
	"context"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gatetest"
	"github.com/oncegate/oncegate/runtime/memgate"
)

type harness struct{ clock *gatetest.Clock }

func (h *harness) MakeBackend(context.Context, *testing.T) (gate.Backend, error) {
	return memgate.New(&memgate.Options{Now: h.clock.Now}), nil
}
func (h *harness) Advance(_ *testing.T, d time.Duration) { h.clock.Advance(d) }
func (h *harness) Close()                                {}

func TestConformance(t *testing.T) {
	gatetest.RunConformanceTests(t, func(context.Context, *testing.T) (gatetest.Harness, error) {
		return &harness{clock: gatetest.NewClock(gatetest.Epoch)}, nil
	})
}
