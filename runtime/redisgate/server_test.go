package redisgate_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/internal/childproc"
)

// redisProc is a redis-server process a test started itself, for setups
// internal/testenv does not make: Cluster nodes and a server with a shifted clock.
type redisProc struct {
	port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *redisProc) addr() string { return "127.0.0.1:" + strconv.Itoa(p.port) }

// startRedis starts redis-server on port in dir with extra arguments and
// environment, and waits until it answers PING.
func startRedis(dir string, port int, env []string, args ...string) (*redisProc, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	base := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--protected-mode", "no",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", dir, "--logfile", ""}
	cmd := exec.Command(bin, append(base, args...)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, log, log
	cmd.Env = append(os.Environ(), env...)
	// Own process group, killed with the test binary if it dies first (on Linux).
	if err := childproc.Start(cmd, nil); err != nil {
		return nil, err
	}
	p := &redisProc{port: port, dir: dir, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	c := redis.NewClient(&redis.Options{Addr: p.addr(), MaxRetries: -1, DisableIdentity: true})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return p, nil
		}
		select {
		case <-p.done:
			b, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			return nil, fmt.Errorf("redis-server on %d exited: %s", port, b)
		default:
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("redis-server on %d: no answer within 10s: %w", port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends the server (SIGTERM, then SIGKILL after 5s) and waits.
func (p *redisProc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
