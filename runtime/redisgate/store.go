package redisgate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/runtime/gate"
)

// DefaultPrefix is the key prefix a Store uses when Options.Prefix is empty.
const DefaultPrefix = "oncegate:"

// maxPrefixBytes bounds Options.Prefix; it is repeated in every key.
const maxPrefixBytes = 256

// Options configure a Store. The zero value (or nil) means defaults.
type Options struct {
	// Prefix starts the Redis key of every record, so gateway keys never share a
	// name with anything else the application stores. Default DefaultPrefix
	// ("oncegate:"). It must be at most 256 bytes of printable UTF-8 with no
	// white space and no braces: a brace would make it a Redis Cluster hash tag
	// and put every record in one slot.
	Prefix string
	// AllowEviction makes Open skip CheckEviction, accepting a server that may
	// evict records under memory pressure. Default false: Open refuses such a
	// server, because an evicted record runs its body again (see EvictionError).
	// Set it only where duplicates are acceptable, or where maxmemory is bounded
	// by something Open cannot see. New never checks.
	AllowEviction bool
}

// Store is the Redis backend. It is safe for concurrent use; it does not own the
// client, so closing the client is the caller's job.
type Store struct {
	c      redis.UniversalClient
	prefix string
}

var _ gate.Admin = (*Store)(nil)

// New returns a Store over client, which may be a *redis.Client (standalone or a
// Sentinel failover client), a *redis.ClusterClient or a *redis.Ring. It does not
// contact the server. It returns an error when client is nil (or a nil pointer)
// or Options.Prefix is invalid; the message names the field and the fix. Use
// Open to also refuse a server that may evict records.
func New(client redis.UniversalClient, opts *Options) (*Store, error) {
	if isNil(client) {
		return nil, errors.New("redisgate.New: client is nil; pass a configured redis.UniversalClient")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if err := validPrefix(o.Prefix); err != nil {
		return nil, err
	}
	return &Store{c: client, prefix: o.Prefix}, nil
}

// isNil reports whether c is nil or a nil pointer to one of go-redis's clients.
func isNil(c redis.UniversalClient) bool {
	switch c := c.(type) {
	case nil:
		return true
	case *redis.Client:
		return c == nil
	case *redis.ClusterClient:
		return c == nil
	case *redis.Ring:
		return c == nil
	}
	return false
}

// validPrefix reports why p cannot be a key prefix, or nil.
func validPrefix(p string) error {
	bad := func(why string) error {
		return fmt.Errorf("redisgate.Options.Prefix: %s (got %q); leave it empty for %q", why, p, DefaultPrefix)
	}
	switch {
	case len(p) > maxPrefixBytes:
		return bad(fmt.Sprintf("must be at most %d bytes", maxPrefixBytes))
	case !utf8.ValidString(p):
		return bad("must be valid UTF-8")
	case strings.ContainsAny(p, "{}"):
		return bad("must not contain braces, which would make it a Cluster hash tag putting every record in one slot")
	}
	for _, r := range p {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return bad("must be printable with no white space")
		}
	}
	return nil
}

// Prefix returns the key prefix of every record.
func (s *Store) Prefix() string { return s.prefix }

// RedisKey returns the Redis key that holds key's record: the prefix followed by
// key byte for byte.
func (s *Store) RedisKey(key string) string { return s.prefix + key }

// run runs script on key's record and returns its reply, wrapping a failure with
// the operation's name and the key. Context errors are returned as they are.
func (s *Store) run(ctx context.Context, sc *redis.Script, op, key string, args ...any) (any, error) {
	v, err := sc.Run(ctx, s.c, []string{s.RedisKey(key)}, args...).Result()
	if err != nil {
		return nil, s.wrap(op, key, err)
	}
	return v, nil
}

// wrap adds the operation and key to err, except to context errors.
func (s *Store) wrap(op, key string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("redisgate: %s %s: %w", op, quoteKey(key), err)
}

// quoteKey quotes key for a message, cut to its first 64 bytes.
func quoteKey(key string) string {
	const max = 64
	if len(key) <= max {
		return fmt.Sprintf("%q", key)
	}
	return fmt.Sprintf("%q… (%d bytes)", key[:max], len(key))
}

// millis returns d in whole milliseconds, rounded up so a positive duration never
// becomes zero; a negative d counts as zero.
func millis(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}
