package redisgate

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ErrEviction is matched (errors.Is) by the *EvictionError that Open and
// CheckEviction return when a server may evict keys.
var ErrEviction = errors.New("redisgate: the server may evict records")

// EvictionError reports a server whose INFO memory shows it may evict keys:
// maxmemory above 0 with a maxmemory-policy other than noeviction. Every record
// carries a TTL, so any volatile-* policy (Memorystore's default is volatile-lru)
// as well as any allkeys-* one may delete a record, and a deleted record is a
// duplicate: a done record evicted lets its redelivery run the body again, and a
// live claim evicted lets a second holder in at the same fence, so no fenced
// sink can refuse either. It unwraps to ErrEviction.
type EvictionError struct {
	// Addr is the host:port of the server (in a Cluster or Ring, the node) that
	// reported the setting.
	Addr string
	// Policy is its maxmemory-policy ("" when INFO memory did not report one).
	Policy string
	// MaxMemory is its maxmemory in bytes (-1 when INFO memory did not report it).
	MaxMemory int64
}

func (e *EvictionError) Error() string {
	got := fmt.Sprintf("maxmemory-policy %s with maxmemory %d bytes", e.Policy, e.MaxMemory)
	if e.Policy == "" || e.MaxMemory < 0 {
		got = "no maxmemory or maxmemory_policy in INFO memory"
	}
	return fmt.Sprintf("redisgate: %s reports %s: Redis may evict records, and an evicted record runs its body again; "+
		"set maxmemory-policy noeviction (or maxmemory 0), or accept the risk with Options.AllowEviction", e.Addr, got)
}

// Unwrap returns ErrEviction.
func (e *EvictionError) Unwrap() error { return ErrEviction }

// Open returns New(client, opts) after CheckVersion has found every server
// behind client to run Redis 7.0 or later and CheckEviction has found that none
// may evict keys (the eviction check is skipped when opts.AllowEviction is set).
// It contacts every master (every shard of a Ring) once or twice. It returns
// New's errors, a *VersionError (matching ErrVersion), an *EvictionError
// (matching ErrEviction) naming the setting, or the error of INFO (wrapped;
// context errors as they are).
func Open(ctx context.Context, client redis.UniversalClient, opts *Options) (*Store, error) {
	s, err := New(client, opts)
	if err != nil {
		return nil, err
	}
	if err := CheckVersion(ctx, client); err != nil {
		return nil, err
	}
	if opts != nil && opts.AllowEviction {
		return s, nil
	}
	if err := CheckEviction(ctx, client); err != nil {
		return nil, err
	}
	return s, nil
}

// CheckEviction reads INFO memory from every server behind client (every master
// of a Cluster, every shard of a Ring, else the one server) and returns an
// *EvictionError for the first that may evict keys: one reporting maxmemory
// above 0 with a maxmemory-policy other than noeviction, or reporting neither
// (an answer it cannot judge fails closed). INFO rather than CONFIG GET, because
// managed Redis (Memorystore) refuses CONFIG. The check holds at the time of the
// call only: a policy changed later is not seen.
func CheckEviction(ctx context.Context, client redis.UniversalClient) error {
	if isNil(client) {
		return errors.New("redisgate.CheckEviction: client is nil")
	}
	return forEachNode(ctx, client, "CheckEviction", checkNode)
}

// forEachNode runs check on every server behind client (every master of a
// Cluster, every shard of a Ring, else the one server) and returns the first
// error a check returned, or the error of reaching the nodes.
func forEachNode(ctx context.Context, client redis.UniversalClient, caller string, check func(context.Context, *redis.Client) error) error {
	var (
		mu    sync.Mutex
		first error
	)
	each := func(ctx context.Context, c *redis.Client) error {
		if err := check(ctx, c); err != nil {
			mu.Lock()
			if first == nil {
				first = err
			}
			mu.Unlock()
		}
		return nil
	}
	var err error
	switch c := client.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, each)
	case *redis.Ring:
		err = c.ForEachShard(ctx, each)
	case *redis.Client:
		err = each(ctx, c)
	default:
		err = fmt.Errorf("redisgate.%s: unsupported client %T", caller, client)
	}
	if err != nil {
		return err
	}
	return first
}

// infoSection returns one server's INFO section; an error other than the
// context's is wrapped with the section and the server's address.
func infoSection(ctx context.Context, c *redis.Client, section string) (string, error) {
	info, err := c.Info(ctx, section).Result()
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("redisgate: INFO %s on %s: %w", section, c.Options().Addr, err)
	}
	return info, err
}

// checkNode judges one server's INFO memory.
func checkNode(ctx context.Context, c *redis.Client) error {
	addr := c.Options().Addr
	info, err := infoSection(ctx, c, "memory")
	if err != nil {
		return err
	}
	policy, maxMemory := parseMemoryInfo(info)
	if maxMemory == 0 || (policy == "noeviction" && maxMemory > 0) {
		return nil
	}
	return &EvictionError{Addr: addr, Policy: policy, MaxMemory: maxMemory}
}

// parseMemoryInfo returns maxmemory_policy ("" when absent) and maxmemory (-1
// when absent or not a number) from an INFO memory reply.
func parseMemoryInfo(info string) (policy string, maxMemory int64) {
	maxMemory = -1
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		name, val, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok {
			continue
		}
		switch name {
		case "maxmemory_policy":
			policy = val
		case "maxmemory":
			if n, err := strconv.ParseInt(val, 10, 64); err == nil && n >= 0 {
				maxMemory = n
			}
		}
	}
	return policy, maxMemory
}
