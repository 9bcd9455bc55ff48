// Package demo is the main job run locally: `oncegate demo`. It starts an
// in-process Pub/Sub fake with the subscription the components would deploy
// (scaled down), reference-worker processes sharing one backend (an SQLite file
// by default), a recording supplier and the push bridge; publishes orders with
// real-world trouble mixed in (republished orders, transport redeliveries,
// concurrent deliveries to two workers, a slow and a failing supplier, a worker
// killed mid-order and restarted, a poison order); and reports whether every
// distinct order reached the supplier exactly once.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/oncegate/oncegate/sizing"
)

// Options configure a run. The zero value runs the default demo.
type Options struct {
	// Orders is how many distinct orders to publish. Default 300.
	Orders int
	// Workers is how many worker processes run. Default 3.
	Workers int
	// Seed makes the trouble mix reproducible. Default 1.
	Seed uint64
	// WorkerCommand starts one reference worker; the demo adds the environment.
	// Default: this executable with the argument "worker".
	WorkerCommand []string
	// WorkerEnv is added to every worker's environment.
	WorkerEnv []string
	// Getenv reads the user's backend choice (ONCEGATE_SQL_DSN or
	// ONCEGATE_REDIS_ADDR); default os.Getenv. Without either, the backend is an
	// SQLite file in a temporary directory.
	Getenv func(string) string
	// NoKill skips killing and restarting a worker.
	NoKill bool
	// Timeout bounds the run. Default 3 minutes.
	Timeout time.Duration
	// Out receives progress and the report. Default os.Stdout.
	Out io.Writer
}

// Plan is the demo's scaled-down plan: a 3 s lease renewed every second, a 7 s
// work deadline and 1 s store phases inside a 10 s ack deadline (claim 1 s +
// work 7 s + complete 1 s + unknown mark 1 s, invariant 5), 1 s backoff, and
// the max delivery attempts the sizing model requires for them.
func Plan() sizing.Plan {
	p := sizing.Plan{
		Lease: 3 * time.Second, Heartbeat: time.Second, WorkDeadline: 7 * time.Second, StoreTimeout: time.Second,
		AckDeadline: 10 * time.Second, MinBackoff: time.Second, MaxBackoff: time.Second,
		TTL: 30 * time.Minute, ShutdownGrace: 2 * time.Second,
	}
	return p.WithDefaults()
}

func (o *Options) defaults() error {
	if o.Orders <= 0 {
		o.Orders = 300
	}
	if o.Workers <= 0 {
		o.Workers = 3
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Timeout <= 0 {
		o.Timeout = 3 * time.Minute
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if len(o.WorkerCommand) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("demo: find this executable to start workers: %w", err)
		}
		o.WorkerCommand = []string{exe, "worker"}
	}
	return nil
}

// backendEnv returns the workers' backend variables and a cleanup.
func backendEnv(getenv func(string) string) ([]string, string, func(), error) {
	if dsn := getenv("ONCEGATE_SQL_DSN"); dsn != "" {
		return []string{"ONCEGATE_BACKEND=sql", "ONCEGATE_SQL_DSN=" + dsn}, "sql (" + strings.SplitN(dsn, ":", 2)[0] + ")", func() {}, nil
	}
	if addr := getenv("ONCEGATE_REDIS_ADDR"); addr != "" {
		return []string{"ONCEGATE_BACKEND=redis", "ONCEGATE_REDIS_ADDR=" + addr}, "redis " + addr, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "oncegate-demo-")
	if err != nil {
		return nil, "", nil, err
	}
	file := filepath.Join(dir, "records.db")
	return []string{"ONCEGATE_BACKEND=sql", "ONCEGATE_SQL_DSN=sqlite:" + file}, "sqlite " + file,
		func() { _ = os.RemoveAll(dir) }, nil
}

// Run runs the demo and returns its report. The error is non-nil when the run
// could not be made or an order was duplicated or lost.
func Run(ctx context.Context, o Options) (Report, error) {
	if err := o.defaults(); err != nil {
		return Report{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	benv, bname, cleanup, err := backendEnv(o.Getenv)
	if err != nil {
		return Report{}, err
	}
	defer cleanup()
	r := &run{o: o, plan: Plan(), backendName: bname, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := r.setUp(ctx, benv); err != nil {
		r.tearDown()
		return Report{}, err
	}
	defer r.tearDown()
	rep, err := r.execute(ctx)
	rep.print(o.Out)
	if err == nil && !rep.OK() {
		err = errors.New("demo: some orders were duplicated or lost")
	}
	return rep, err
}
