package gateenv_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/redisgate"
	"github.com/oncegate/oncegate/sizing"
)

// TestRedisEviction: a Redis that may evict records is refused at start-up
// with an error naming the setting and the opt-out variable; the opt-out opens
// it; a malformed opt-out names the variable.
func TestRedisEviction(t *testing.T) {
	srv := testenv.PrivateRedis(t)
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr(), DisableIdentity: true})
	defer admin.Close()
	ctx := context.Background()
	if err := errors.Join(admin.ConfigSet(ctx, "maxmemory", "64mb").Err(),
		admin.ConfigSet(ctx, "maxmemory-policy", "volatile-lru").Err()); err != nil {
		t.Fatal(err)
	}
	e := valid.With("ONCEGATE_BACKEND", "redis", "ONCEGATE_REDIS_ADDR", srv.Addr())
	_, err := gateenv.New(ctx, &gateenv.Options{Getenv: e.Get})
	if !errors.Is(err, redisgate.ErrEviction) {
		t.Fatalf("New over volatile-lru: err = %v, want ErrEviction", err)
	}
	for _, want := range []string{"maxmemory-policy volatile-lru", "noeviction", gateenv.EnvRedisAllowEviction + "=1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	roundTrip(t, e.With(gateenv.EnvRedisAllowEviction, "1"))
	_, err = gateenv.New(ctx, &gateenv.Options{Getenv: e.With(gateenv.EnvRedisAllowEviction, "maybe").Get})
	var ee *sizing.EnvError
	if !errors.As(err, &ee) || ee.Var != gateenv.EnvRedisAllowEviction {
		t.Fatalf("malformed opt-out: err = %v", err)
	}
}
