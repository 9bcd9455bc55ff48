package testenv

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// redisFlavor runs redis-server in the foreground with nothing kept on disk.
var redisFlavor = &flavor{
	kind:         "redis",
	stopSignal:   syscall.SIGTERM,
	startTimeout: 10 * time.Second,
	command: func(s *Server) *exec.Cmd {
		return exec.Command(s.cmd,
			"--port", strconv.Itoa(s.port),
			"--bind", "127.0.0.1",
			"--protected-mode", "no",
			"--save", "",
			"--appendonly", "no",
			"--daemonize", "no",
			"--dir", s.dir,
			"--logfile", "",
		)
	},
	ping: func(ctx context.Context, s *Server) error { return pingRedis(ctx, s.Addr()) },
	dsn:  (*Server).Addr,
}

// redisKind resolves the Redis server behind Redis.
var redisKind = &resolver{
	name:       "Redis",
	envVar:     "ONCEGATE_TEST_REDIS_ADDR",
	defaultDSN: "127.0.0.1:6379",
	ping:       pingRedis,
	private:    newRedisServer,
}

// Redis returns the host:port of a Redis server for the test: the one named by
// ONCEGATE_TEST_REDIS_ADDR, else 127.0.0.1:6379 if it answers PING, else a private
// redis-server shared by the test binary. It skips the test when there is none, or
// fails it when CI=true or when the environment variable names a server that does not
// answer. Tests share the server: isolate keys with UniqueName, and never stop it
// (use PrivateRedis).
func Redis(t testing.TB) string {
	t.Helper()
	return redisKind.get(t)
}

// PrivateRedis starts a fresh redis-server that only this test uses, on a free port
// with nothing kept on disk (a restart loses every key), and stops it when the test
// ends. It skips or fails the test as Redis does when redis-server cannot be started.
func PrivateRedis(t testing.TB) *Server {
	t.Helper()
	return privateServer(t, "Redis", newRedisServer)
}

// newRedisServer starts a private redis-server.
func newRedisServer() (*Server, error) {
	bin, err := lookBinary([]string{"redis-server"}, "/usr/bin", "/usr/local/bin", "/usr/sbin")
	if err != nil {
		return nil, err
	}
	return launch(redisFlavor, bin, nil, nil, nil)
}

// pingRedis sends PING to addr over a connection it dials itself, so an unreachable
// address is an error here rather than a go-redis pool log line and retries.
func pingRedis(ctx context.Context, addr string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close() // unused if the client never dials; closing twice is harmless
	var handed atomic.Bool
	c := goredis.NewClient(&goredis.Options{
		Addr: addr,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if handed.CompareAndSwap(false, true) {
				return conn, nil
			}
			return d.DialContext(ctx, network, addr)
		},
		ReadTimeout:              2 * time.Second,
		WriteTimeout:             2 * time.Second,
		MaxRetries:               -1,
		PoolSize:                 1,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	defer c.Close()
	return c.Ping(ctx).Err()
}
