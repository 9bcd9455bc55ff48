package redisgate_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/redisgate"
)

// Example runs a Lock on Redis: the first delivery charges the card, the
// redelivery is a duplicate. It needs a Redis server at ONCEGATE_TEST_REDIS_ADDR,
// or 127.0.0.1:6379.
func Example() {
	addr := os.Getenv("ONCEGATE_TEST_REDIS_ADDR")
	if addr == "" {
		addr = "127.0.0.1:6379"
	}
	// A *redis.ClusterClient or a Sentinel failover client works the same way.
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()

	prefix := "example-" + rand.Text()[:8] + ":" // a fresh prefix, for a repeatable example
	store, err := redisgate.New(client, &redisgate.Options{Prefix: prefix})
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := gate.New(store, &gate.Options{Namespace: "orders", Lease: time.Minute, TTL: time.Hour})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	charge := func(ctx context.Context, c gate.Claim) error {
		fmt.Println("charged", c.Key, "fence", c.Fence)
		return nil
	}
	for range 2 {
		err := g.Lock(ctx, "po-1042", charge)
		fmt.Println(gate.OutcomeOf(err), errors.Is(err, gate.ErrDuplicate))
	}
	key := store.RedisKey(g.Key("po-1042")) // prefix + "orders:po-1042"
	fmt.Println("expires with its record:", client.PTTL(ctx, key).Val() > 59*time.Minute)
	client.Del(ctx, key)
	// Output:
	// charged orders:po-1042 fence 1
	// ran false
	// duplicate true
	// expires with its record: true
}
