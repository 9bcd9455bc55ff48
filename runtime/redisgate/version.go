package redisgate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/runtime/internal/dotted"
)

// ErrVersion is matched (errors.Is) by the *VersionError that Open and
// CheckVersion return for a server older than MinServerVersion.
var ErrVersion = errors.New("redisgate: the server is older than Redis 7.0")

// MinServerVersion is the oldest Redis the record format runs on: a claim is
// SET with NX and GET together (Redis 7.0, "SET": "Starting with Redis version
// 7.0.0: Allowed the NX and GET options to be used together") and reads the
// key's expiry with PEXPIRETIME (Redis 7.0, "PEXPIRETIME"). Source:
// https://redis.io/docs/latest/commands/set/ and
// https://redis.io/docs/latest/commands/pexpiretime/
const MinServerVersion = "7.0"

// VersionError reports a server whose INFO server shows a redis_version older
// than MinServerVersion (or none). Memorystore for Redis: create the instance
// with redis_version REDIS_7_0 or later. It unwraps to ErrVersion.
type VersionError struct {
	// Addr is the host:port of the server (in a Cluster or Ring, the node).
	Addr string
	// Version is its redis_version ("" when INFO server reported none).
	Version string
}

func (e *VersionError) Error() string {
	got := "reports no redis_version in INFO server"
	if e.Version != "" {
		got = "runs Redis " + e.Version
	}
	return fmt.Sprintf("redisgate: %s %s; oncegate's record format needs Redis %s or later (SET with NX and GET, PEXPIRETIME)",
		e.Addr, got, MinServerVersion)
}

// Unwrap returns ErrVersion.
func (e *VersionError) Unwrap() error { return ErrVersion }

// CheckVersion reads INFO server from every server behind client (every master
// of a Cluster, every shard of a Ring, else the one server) and returns a
// *VersionError for the first older than MinServerVersion. Valkey reports a
// redis_version too (7.2.4 for every Valkey release so far) and passes.
func CheckVersion(ctx context.Context, client redis.UniversalClient) error {
	if isNil(client) {
		return errors.New("redisgate.CheckVersion: client is nil")
	}
	return forEachNode(ctx, client, "CheckVersion", func(ctx context.Context, c *redis.Client) error {
		info, err := infoSection(ctx, c, "server")
		if err != nil {
			return err
		}
		v := infoField(info, "redis_version")
		if !dotted.AtLeast(v, 7, 0) {
			return &VersionError{Addr: c.Options().Addr, Version: v}
		}
		return nil
	})
}

// infoField returns the value of name in an INFO reply ("" when absent).
func infoField(info, name string) string {
	for line := range strings.Lines(info) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && k == name {
			return v
		}
	}
	return ""
}
