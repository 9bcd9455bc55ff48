// Package redisenv links the redis backend (runtime/redisgate over go-redis)
// into gateenv. A program that runs with ONCEGATE_BACKEND=redis imports it for
// its side effect,
//
//	import _ "github.com/oncegate/oncegate/runtime/gateenv/redisenv"
//
// as a database/sql driver is imported; its init registers Open as "redis".
package redisenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/gateenv/internal/redact"
	"github.com/oncegate/oncegate/runtime/redisgate"
	"github.com/oncegate/oncegate/sizing"
)

func init() { gateenv.Register("redis", Open) }

const addrForm = "host:port, a comma-separated list of them (Redis Cluster), or a redis:// or rediss:// URL"

// Open is the redis backend's gateenv.Opener. It connects to
// ONCEGATE_REDIS_ADDR: one host:port (a single server), a comma-separated list
// (a Cluster, through redis.NewUniversalClient), or a redis:// or rediss://
// URL (redis.ParseURL: password, database, TLS). It pings the server so a
// wrong address fails at start-up, and refuses a server that may evict records
// (redisgate.Open, matching redisgate.ErrEviction) unless
// ONCEGATE_REDIS_ALLOW_EVICTION=1. A malformed variable is a *sizing.EnvError
// naming it (the address's credentials hidden).
func Open(ctx context.Context, getenv func(string) string) (gate.Backend, func() error, error) {
	v := strings.TrimSpace(getenv(gateenv.EnvRedisAddr))
	allow, err := parseBool(gateenv.EnvRedisAllowEviction, getenv(gateenv.EnvRedisAllowEviction),
		"1 (accept a server that may evict records, and so duplicates) or 0")
	if err != nil {
		return nil, nil, err
	}
	var c redis.UniversalClient
	if strings.HasPrefix(v, "redis://") || strings.HasPrefix(v, "rediss://") {
		opt, err := redis.ParseURL(v)
		if err != nil {
			return nil, nil, &sizing.EnvError{Var: gateenv.EnvRedisAddr, Value: redact.DSN(v), Want: addrForm, Err: withheld(err)}
		}
		c = redis.NewClient(opt)
	} else {
		addrs, err := parseAddrs(v)
		if err != nil {
			return nil, nil, err
		}
		c = redis.NewUniversalClient(&redis.UniversalOptions{Addrs: addrs})
	}
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, nil, fmt.Errorf("ping %s: %w", redact.DSN(v), err)
	}
	s, err := redisgate.Open(ctx, c, &redisgate.Options{AllowEviction: allow})
	if errors.Is(err, redisgate.ErrEviction) {
		err = fmt.Errorf("%w (or %s=1)", err, gateenv.EnvRedisAllowEviction)
	}
	if err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	return s, c.Close, nil
}

// parseBool reads an optional boolean variable; empty means false.
func parseBool(name, v, want string) (bool, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, &sizing.EnvError{Var: name, Value: v, Want: want, Err: err}
	}
	return b, nil
}

// parseAddrs splits a comma-separated list of host:port addresses.
func parseAddrs(v string) ([]string, error) {
	if v == "" {
		return nil, &sizing.EnvError{Var: gateenv.EnvRedisAddr, Want: addrForm}
	}
	var addrs []string
	for a := range strings.SplitSeq(v, ",") {
		a = strings.TrimSpace(a)
		host, port, err := net.SplitHostPort(a)
		if err == nil {
			if n, perr := strconv.Atoi(port); perr != nil || n < 1 || n > 65535 || host == "" || strings.ContainsAny(host, " \t\r\n\x00") {
				err = errors.New("invalid host or port")
			}
		}
		if err != nil {
			return nil, &sizing.EnvError{Var: gateenv.EnvRedisAddr, Value: redact.DSN(v), Want: addrForm, Err: withheld(err)}
		}
		addrs = append(addrs, a)
	}
	return addrs, nil
}

// withheld drops the input that a parse error quotes whole (net/url's
// *url.Error, net's *net.AddrError), since it holds the password: the error
// keeps only what went wrong.
func withheld(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	var ae *net.AddrError
	if errors.As(err, &ae) {
		return errors.New(ae.Err)
	}
	return err
}
