package sqlgate_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

const (
	workerEnv  = "SQLGATE_TEST_WORKER_DSN"
	workerKeys = 60
)

// TestSQLiteSharedByProcesses runs three worker processes on one SQLite file, as
// the local demo does, each locking the same keys at the same moment: every key's
// body runs exactly once in all, and no worker sees a store error (SQLITE_BUSY
// included).
func TestSQLiteSharedByProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dsn := "sqlite:" + sqliteFile(t)
	s, err := sqlgate.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSchema(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	start := strconv.FormatInt(time.Now().Add(500*time.Millisecond).UnixMilli(), 10)
	cmds := make([]*exec.Cmd, 3)
	outs := make([]*strings.Builder, 3)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestSQLiteWorkerProcess$", "-test.count=1")
		cmds[i].Env = append(os.Environ(), workerEnv+"="+dsn, "SQLGATE_TEST_WORKER_START="+start)
		outs[i] = new(strings.Builder)
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	runs := map[string]int{}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("worker %d: %v\n%s", i, err, outs[i])
		}
		for _, line := range strings.Split(outs[i].String(), "\n") {
			if k, ok := strings.CutPrefix(line, "ran "); ok {
				runs[k]++
			}
		}
	}
	for k := range workerKeys {
		if n := runs[fmt.Sprint("order-", k)]; n != 1 {
			t.Errorf("order-%d ran %d times, want 1", k, n)
		}
	}
}

// TestSQLiteWorkerProcess is the worker of TestSQLiteSharedByProcesses; it does
// nothing unless started by it.
func TestSQLiteWorkerProcess(t *testing.T) {
	dsn := os.Getenv(workerEnv)
	if dsn == "" {
		t.Skip("worker process only")
	}
	ctx := context.Background()
	s, err := sqlgate.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g, err := gate.New(s, &gate.Options{Lease: time.Minute, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	startMs, _ := strconv.ParseInt(os.Getenv("SQLGATE_TEST_WORKER_START"), 10, 64)
	time.Sleep(time.Until(time.UnixMilli(startMs)))
	for k := range workerKeys {
		key := fmt.Sprint("order-", k)
		err := g.Lock(ctx, key, func(context.Context, gate.Claim) error {
			fmt.Println("ran", key)
			return nil
		})
		if err != nil && !errors.Is(err, gate.ErrDuplicate) && !errors.Is(err, gate.ErrInProgress) {
			t.Errorf("Lock(%s): %v", key, err)
		}
	}
}
