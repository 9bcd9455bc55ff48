package redisgate_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/redisgate"
)

// TestOpenRefusesEviction: Open refuses a server that may evict records (any
// policy but noeviction under a maxmemory limit) with an error naming the
// setting and the accepted values, and accepts noeviction, maxmemory 0, or any
// server when AllowEviction is set.
func TestOpenRefusesEviction(t *testing.T) {
	srv := testenv.PrivateRedis(t)
	c := newClient(t, srv.Addr())
	ctx := context.Background()
	tests := []struct {
		policy, maxMemory string
		allow             bool
		refused           bool
	}{
		{"volatile-lru", "100mb", false, true}, // Memorystore's default
		{"allkeys-lru", "100mb", false, true},
		{"volatile-ttl", "100mb", false, true},
		{"allkeys-random", "100mb", false, true},
		{"volatile-lfu", "100mb", false, true},
		{"noeviction", "100mb", false, false},
		{"volatile-lru", "0", false, false}, // no limit: nothing is evicted
		{"volatile-lru", "100mb", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.policy+"/"+tt.maxMemory, func(t *testing.T) {
			if err := c.ConfigSet(ctx, "maxmemory-policy", tt.policy).Err(); err != nil {
				t.Fatal(err)
			}
			if err := c.ConfigSet(ctx, "maxmemory", tt.maxMemory).Err(); err != nil {
				t.Fatal(err)
			}
			s, err := redisgate.Open(ctx, c, &redisgate.Options{AllowEviction: tt.allow})
			if !tt.refused {
				if err != nil || s == nil {
					t.Fatalf("Open = %v, %v; want a store", s, err)
				}
				return
			}
			var ee *redisgate.EvictionError
			if !errors.Is(err, redisgate.ErrEviction) || !errors.As(err, &ee) || s != nil {
				t.Fatalf("Open = %v, %v; want an EvictionError", s, err)
			}
			if ee.Policy != tt.policy || ee.MaxMemory != 100<<20 || ee.Addr != srv.Addr() {
				t.Errorf("EvictionError = %+v", ee)
			}
			for _, want := range []string{"maxmemory-policy " + tt.policy, "noeviction", "maxmemory 0", "AllowEviction"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if err := redisgate.CheckEviction(ctx, c); !errors.Is(err, redisgate.ErrEviction) {
				t.Errorf("CheckEviction = %v", err)
			}
		})
	}
}

// TestOpenSharedServers: the shared test servers (default configuration,
// maxmemory 0) pass the check, standalone and Cluster (every master is read).
func TestOpenSharedServers(t *testing.T) {
	ctx := context.Background()
	if _, err := redisgate.Open(ctx, newClient(t, testenv.Redis(t)), nil); err != nil {
		t.Errorf("standalone: %v", err)
	}
	cc := newClusterClient(t)
	if err := redisgate.CheckEviction(ctx, cc); err != nil {
		t.Fatalf("Cluster: %v", err)
	}
	// One master that may evict is enough to refuse the Cluster.
	var (
		mu       sync.Mutex
		evicting string
	)
	err := cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { // concurrently
		mu.Lock()
		defer mu.Unlock()
		if evicting != "" {
			return nil
		}
		evicting = n.Options().Addr
		return errors.Join(n.ConfigSet(ctx, "maxmemory", "100mb").Err(), n.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err())
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			return errors.Join(n.ConfigSet(ctx, "maxmemory", "0").Err(), n.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
		})
	})
	var ee *redisgate.EvictionError
	if _, err := redisgate.Open(ctx, cc, nil); !errors.As(err, &ee) || ee.Addr != evicting {
		t.Fatalf("Cluster with %s evicting: Open error %v", evicting, err)
	}
}
