package redisgate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/runtime/gate"
)

// scanCount is the COUNT hint of each SCAN call: how many keys a server looks at
// per round trip.
const scanCount = 1000

// ListUnresolved implements gate.Admin: it returns up to limit unknown
// records, oldest lease_expiry first (then by key); limit ≤ 0 means all. It SCANs
// the prefix on every master of a Cluster (every shard of a Ring, or the one
// server), then reads the state of each match and the whole record of each
// unknown one, so its cost grows with the servers' keyspaces; it is meant for an
// operator's reconcile run. It is not a snapshot: records that change during the
// scan may be missed or listed.
func (s *Store) ListUnresolved(ctx context.Context, limit int) ([]gate.Record, error) {
	var (
		mu    sync.Mutex
		found = map[string]gate.Record{} // SCAN may return a key more than once
	)
	err := s.eachServer(ctx, func(ctx context.Context, node redis.Cmdable) error {
		var cursor uint64
		for {
			keys, next, err := node.Scan(ctx, cursor, s.match(), scanCount).Result()
			if err != nil {
				return err
			}
			recs, err := s.unknownAmong(ctx, keys)
			if err != nil {
				return err
			}
			mu.Lock()
			for _, r := range recs {
				found[r.Key] = r
			}
			mu.Unlock()
			if next == 0 {
				return nil
			}
			cursor = next
		}
	})
	if err != nil {
		return nil, s.wrapList(err)
	}
	out := make([]gate.Record, 0, len(found))
	for _, r := range found {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].LeaseExpiry.Equal(out[j].LeaseExpiry) {
			return out[i].LeaseExpiry.Before(out[j].LeaseExpiry)
		}
		return out[i].Key < out[j].Key
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (s *Store) wrapList(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("redisgate: list unresolved under prefix %q: %w", s.prefix, err)
}

// eachServer calls fn for every server that holds a share of the keyspace,
// concurrently for a Cluster's masters or a Ring's shards.
func (s *Store) eachServer(ctx context.Context, fn func(context.Context, redis.Cmdable) error) error {
	each := func(ctx context.Context, c *redis.Client) error { return fn(ctx, c) }
	switch c := s.c.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, each)
	case *redis.Ring:
		return c.ForEachShard(ctx, each)
	default:
		return fn(ctx, s.c)
	}
}

// unknownAmong returns the unknown records among the Redis keys, reading them
// through the store's client so each read is routed to its key's slot. A key that
// vanished, holds neither a record nor an old-format hash, or is no longer
// unknown is left out. A record is read by its first bytes first (its state), an
// old-format hash by its state field, and only unknown ones whole.
func (s *Store) unknownAmong(ctx context.Context, keys []string) ([]gate.Record, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	const unknownHead = valueVersion + "unknown "
	pipe := s.c.Pipeline()
	heads := make([]*redis.StringCmd, len(keys))
	for i, k := range keys {
		heads[i] = pipe.GetRange(ctx, k, 0, int64(len(unknownHead)-1))
	}
	if _, err := pipe.Exec(ctx); err != nil && !skippable(err) {
		return nil, err
	}
	pipe = s.c.Pipeline()
	var (
		values []*redis.StringCmd // records whose head says unknown
		vnames []string
		states []*redis.StringCmd // old-format hashes
		snames []string
	)
	for i, c := range heads {
		switch err := c.Err(); {
		case err == nil:
			if c.Val() == unknownHead {
				values = append(values, pipe.Get(ctx, keys[i]))
				vnames = append(vnames, keys[i])
			}
		case redis.HasErrorPrefix(err, "WRONGTYPE"):
			states = append(states, pipe.HGet(ctx, keys[i], "state"))
			snames = append(snames, keys[i])
		case !skippable(err):
			return nil, err
		}
	}
	if len(values)+len(states) == 0 {
		return nil, nil
	}
	if _, err := pipe.Exec(ctx); err != nil && !skippable(err) {
		return nil, err
	}
	var out []gate.Record
	for i, c := range values {
		if err := c.Err(); err != nil && !skippable(err) {
			return nil, err
		}
		v := c.Val()
		if !strings.HasPrefix(v, unknownHead) {
			continue // resolved or gone meanwhile
		}
		r, err := decodeValue(strings.TrimPrefix(vnames[i], s.prefix), v, -1) // an unknown record has no TTL
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", quoteKey(vnames[i]), err)
		}
		out = append(out, r)
	}
	pipe = s.c.Pipeline()
	var reads []*redis.MapStringStringCmd
	var names []string
	for i, c := range states {
		if err := c.Err(); err != nil && !skippable(err) {
			return nil, err
		}
		if c.Val() == string(gate.StateUnknown) {
			reads = append(reads, pipe.HGetAll(ctx, snames[i]))
			names = append(names, snames[i])
		}
	}
	if len(reads) == 0 {
		return out, nil
	}
	if _, err := pipe.Exec(ctx); err != nil && !skippable(err) {
		return nil, err
	}
	for i, c := range reads {
		if err := c.Err(); err != nil && !skippable(err) {
			return nil, err
		}
		fields := c.Val()
		if fields["state"] != string(gate.StateUnknown) {
			continue // resolved meanwhile
		}
		flat := make([]any, 0, 2*len(fields))
		for f, v := range fields {
			flat = append(flat, f, v)
		}
		r, err := decodeRecord(strings.TrimPrefix(names[i], s.prefix), flat)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", quoteKey(names[i]), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// skippable reports whether a per-key read error means "not a record": the key
// vanished (redis.Nil) or holds another type (WRONGTYPE).
func skippable(err error) bool {
	return errors.Is(err, redis.Nil) || redis.HasErrorPrefix(err, "WRONGTYPE")
}

// match is the SCAN MATCH pattern of every record key: the prefix with glob
// metacharacters escaped, then *.
func (s *Store) match() string {
	var b strings.Builder
	for _, r := range s.prefix {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('*')
	return b.String()
}
