package redisgate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/redisgate"
)

// markUnknown claims key with lease and marks it unknown.
func markUnknown(t *testing.T, s *redisgate.Store, key string, lease time.Duration) {
	t.Helper()
	r := mustClaim(t, s, key, lease, gate.Won)
	if ok, err := s.MarkUnknown(context.Background(), key, r.Fence); err != nil || !ok {
		t.Fatalf("MarkUnknown(%q) = %v, %v", key, ok, err)
	}
}

// TestListUnresolvedCluster lists unknown records spread over every master of the
// Cluster, oldest lease first, and only under the store's own prefix, even when
// the prefix holds glob characters that would match another prefix unescaped.
func TestListUnresolvedCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-master Redis Cluster; skipped with -short")
	}
	c := newClusterClient(t)
	ctx := context.Background()
	base := uniquePrefix(t)
	mine, err := redisgate.New(c, &redisgate.Options{Prefix: base + "*[1]?:"})
	if err != nil {
		t.Fatal(err)
	}
	// Unescaped, the pattern base*[1]?:* would match this prefix too.
	other, err := redisgate.New(c, &redisgate.Options{Prefix: base + "X1a:"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deletePrefix(t, c, mine.Prefix())
		deletePrefix(t, c, other.Prefix())
	})

	const n = 30
	masters := map[string]bool{}
	for i := range n {
		k := fmt.Sprintf("u-%02d", i)
		markUnknown(t, mine, k, time.Duration(i+1)*time.Minute)
		node, err := c.MasterForKey(ctx, mine.RedisKey(k))
		if err != nil {
			t.Fatal(err)
		}
		masters[node.Options().Addr] = true
	}
	if len(masters) != clusterMasters {
		t.Fatalf("records on %d masters, want all %d (no shared hash tag)", len(masters), clusterMasters)
	}
	markUnknown(t, other, "theirs", time.Minute)
	mustClaim(t, mine, "claimed", time.Minute, gate.Won)
	d := mustClaim(t, mine, "done", time.Minute, gate.Won)
	if ok, _ := mine.Complete(ctx, gate.Completion{Key: "done", Fence: d.Fence, TTL: time.Hour}); !ok {
		t.Fatal("Complete refused")
	}
	if err := c.Set(ctx, mine.RedisKey("not-a-record"), "x", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}

	got, err := mine.ListUnresolved(ctx, 0)
	if err != nil {
		t.Fatalf("ListUnresolved: %v", err)
	}
	if len(got) != n {
		t.Fatalf("ListUnresolved returned %d records, want %d: %v", len(got), n, keysOf(got))
	}
	for i, r := range got {
		if want := fmt.Sprintf("u-%02d", i); r.Key != want || r.State != gate.StateUnknown || r.Fence != 1 || r.Owner == "" {
			t.Fatalf("record %d = %q %s fence %d owner %q, want %q unknown fence 1", i, r.Key, r.State, r.Fence, r.Owner, want)
		}
	}
	if got, err := mine.ListUnresolved(ctx, 5); err != nil || len(got) != 5 || got[4].Key != "u-04" {
		t.Fatalf("ListUnresolved(5) = %v, %v; want u-00…u-04", keysOf(got), err)
	}
	if got, err := other.ListUnresolved(ctx, 0); err != nil || len(got) != 1 || got[0].Key != "theirs" {
		t.Fatalf("other prefix: ListUnresolved = %v, %v; want [theirs]", keysOf(got), err)
	}
}

func keysOf(rs []gate.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Key
	}
	return out
}

// TestPurgeLeavesNothingBehind shows why Purge deletes nothing: once a record's
// expires_at passes, Redis has already removed its key, while live claims and
// unknown records stay.
func TestPurgeLeavesNothingBehind(t *testing.T) {
	s, c := newStore(t)
	ctx := context.Background()
	d := mustClaim(t, s, "done", time.Minute, gate.Won)
	if ok, _ := s.Complete(ctx, gate.Completion{Key: "done", Fence: d.Fence, TTL: 50 * time.Millisecond}); !ok {
		t.Fatal("Complete refused")
	}
	mustClaim(t, s, "live", time.Minute, gate.Won)
	markUnknown(t, s, "unknown", 0)
	time.Sleep(150 * time.Millisecond)
	if n, err := s.Purge(ctx, 0); err != nil || n != 0 {
		t.Fatalf("Purge = %d, %v; want 0", n, err)
	}
	exists := func(k string) bool {
		n, err := c.Exists(ctx, s.RedisKey(k)).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	if exists("done") || !exists("live") || !exists("unknown") {
		t.Fatalf("exists: done %v live %v unknown %v; want false true true", exists("done"), exists("live"), exists("unknown"))
	}
	mustClaim(t, s, "unknown", time.Minute, gate.Unknown)
	if r := mustClaim(t, s, "done", time.Minute, gate.Won); r.Fence != 1 {
		t.Fatalf("claim after expiry: fence %d, want 1 (a fresh record)", r.Fence)
	}
}

// TestRing runs a store over a go-redis Ring of two private servers: records
// spread over both shards, and ListUnresolved scans every shard.
func TestRing(t *testing.T) {
	a, b := testenv.PrivateRedis(t), testenv.PrivateRedis(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": a.Addr(), "b": b.Addr()}})
	t.Cleanup(func() { _ = ring.Close() })
	s, err := redisgate.New(ring, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := range n {
		markUnknown(t, s, fmt.Sprintf("u-%02d", i), time.Duration(i+1)*time.Minute)
	}
	mustClaim(t, s, "u-00", time.Minute, gate.Unknown)
	for _, srv := range []*testenv.Server{a, b} {
		if keys := scanKeys(t, newClient(t, srv.Addr()), "*"); len(keys) == 0 || len(keys) == n {
			t.Fatalf("shard %s holds %d of %d records, want a share", srv.Addr(), len(keys), n)
		}
	}
	got, err := s.ListUnresolved(context.Background(), 0)
	if err != nil || len(got) != n || got[0].Key != "u-00" || got[n-1].Key != fmt.Sprintf("u-%02d", n-1) {
		t.Fatalf("ListUnresolved = %v, %v; want u-00…u-%02d", keysOf(got), err, n-1)
	}
}
