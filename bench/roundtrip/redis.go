package roundtrip

import (
	"context"
	"net"

	"github.com/redis/go-redis/v9"
)

// Names of the counts Hook keeps.
const (
	// RedisCommands counts commands sent one at a time: each is one round trip
	// (go-redis's own retries after a network error are not seen).
	RedisCommands = "redis_commands"
	// RedisPipelines counts pipelines and transactions: each is one round trip
	// however many commands it holds.
	RedisPipelines = "redis_pipelines"
	// RedisDials counts connections the client opened.
	RedisDials = "redis_dials"
	// RedisSetup counts the commands a new connection sends before its first
	// request (HELLO, AUTH, CLIENT, SELECT, READONLY): a cost per connection,
	// not per request, so they are not RedisCommands.
	RedisSetup = "redis_setup"
)

// setupCommands are the commands go-redis sends while it sets a connection up.
var setupCommands = map[string]bool{"hello": true, "auth": true, "client": true, "select": true, "readonly": true}

// Hook is a go-redis hook counting, in C, commands (RedisCommands, and each
// under "redis_" and its name, such as "redis_evalsha"), pipelines
// (RedisPipelines), connections (RedisDials) and connection set-up commands
// (RedisSetup). Add it with client.AddHook.
type Hook struct{ C *Counter }

var _ redis.Hook = Hook{}

// DialHook implements redis.Hook.
func (h Hook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err == nil {
			h.C.Add(RedisDials, 1)
		}
		return conn, err
	}
}

// ProcessHook implements redis.Hook.
func (h Hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if setupCommands[cmd.Name()] {
			add(ctx, h.C, RedisSetup)
		} else {
			add(ctx, h.C, RedisCommands)
			add(ctx, h.C, "redis_"+cmd.Name())
		}
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook.
func (h Hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		add(ctx, h.C, RedisPipelines)
		return next(ctx, cmds)
	}
}
