package redisgate_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gatetest"
	"github.com/oncegate/oncegate/runtime/redisgate"
)

// harness makes Stores under a fresh prefix on one client. Advance sleeps: the
// clock is the server's. Close checks that every key it left has a TTL unless it
// is an unknown record, then deletes them.
type harness struct {
	c        redis.UniversalClient
	t        *testing.T
	prefixes []string
}

func (h *harness) MakeBackend(_ context.Context, t *testing.T) (gate.Backend, error) {
	h.t = t
	p := uniquePrefix(t)
	h.prefixes = append(h.prefixes, p)
	return redisgate.New(h.c, &redisgate.Options{Prefix: p})
}

func (h *harness) Advance(_ *testing.T, d time.Duration) { time.Sleep(d) }

// DeletesAtExpiry implements gatetest.ExpiryDeleter: every record but an unknown
// one has its key's expiry at its expires_at.
func (h *harness) DeletesAtExpiry() bool { return true }

func (h *harness) Close() {
	for _, p := range h.prefixes {
		checkTTLs(h.t, h.c, p)
		deletePrefix(h.t, h.c, p)
	}
}

func TestConformance(t *testing.T) {
	gatetest.RunConformanceTests(t, func(_ context.Context, t *testing.T) (gatetest.Harness, error) {
		return &harness{c: newClient(t, testenv.Redis(t))}, nil
	})
}

func TestConformanceCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-master Redis Cluster; skipped with -short")
	}
	gatetest.RunConformanceTests(t, func(_ context.Context, t *testing.T) (gatetest.Harness, error) {
		return &harness{c: newClusterClient(t)}, nil
	})
}
