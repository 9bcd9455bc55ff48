package redisgate_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/oncegate/oncegate/internal/testenv"
)

// clusterMasters is how many masters the test cluster has.
const clusterMasters = 3

// cluster is the Redis Cluster the test binary starts on first use and TestMain
// stops.
var (
	clusterMu    sync.Mutex
	clusterOnce  sync.Once
	clusterProcs []*redisProc
	clusterDir   string
	clusterErr   error
)

// clusterAddrs returns the seed addresses of a 3-master Redis Cluster started from
// the installed redis-server (cluster-enabled, slots assigned by
// redis-cli --cluster create, no replicas), waiting until every node reports
// cluster_state:ok.
func clusterAddrs(t testing.TB) []string {
	t.Helper()
	clusterOnce.Do(func() { clusterErr = startCluster(t) })
	if clusterErr != nil {
		testenv.Missing(t, "redis cluster: %v", clusterErr)
	}
	addrs := make([]string, len(clusterProcs))
	for i, p := range clusterProcs {
		addrs[i] = p.addr()
	}
	return addrs
}

func startCluster(t testing.TB) error {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return err
	}
	if clusterDir, err = os.MkdirTemp("", "redisgate-cluster-"); err != nil {
		return err
	}
	var addrs []string
	for i := range clusterMasters {
		port, bus := testenv.FreePort(t), testenv.FreePort(t)
		p, err := startRedis(filepath.Join(clusterDir, strconv.Itoa(i)), port, nil,
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-port", strconv.Itoa(bus), "--cluster-node-timeout", "5000")
		if err != nil {
			return err
		}
		clusterProcs = append(clusterProcs, p)
		addrs = append(addrs, p.addr())
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a, DisableIdentity: true})
		for {
			info, err := c.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				c.Close()
				return fmt.Errorf("node %s: cluster_state not ok within 30s: %v %q", a, err, info)
			}
			time.Sleep(100 * time.Millisecond)
		}
		c.Close()
	}
	return nil
}

// stopCluster stops the cluster's nodes, if they were started, and removes their
// directory.
func stopCluster() {
	var wg sync.WaitGroup
	for _, p := range clusterProcs {
		wg.Go(p.stop)
	}
	wg.Wait()
	if clusterDir != "" {
		_ = os.RemoveAll(clusterDir)
	}
}

// newClusterClient returns a Cluster client for the test cluster, closed when the
// test ends.
func newClusterClient(t testing.TB) *redis.ClusterClient {
	t.Helper()
	c := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:                    clusterAddrs(t),
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}
