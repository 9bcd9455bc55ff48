// Package demo is the main job run locally: `oncegate demo`. It starts an
// in-process Pub/Sub fake with the subscription the components would deploy
// (scaled down), reference-worker processes sharing one backend (an SQLite file
// by default), a recording supplier and the push bridge; publishes orders with
// real-world trouble mixed in (republished orders, transport redeliveries,
// concurrent deliveries to two workers, a slow and a failing supplier, a worker
// killed mid-order and restarted, a poison order); and reports whether every
// distinct order reached the supplier exactly once.
//
// The supplier honours Idempotency-Key (supplier.NewIdempotent), as a payment
// or ordering API would, so the report has two numbers: orders the supplier
// holds more than once (two overlapping calls both committed: only the
// gateway's claim prevents that; must be 0), and raw repeats (calls of a key
// after its first commit). A repeat is legitimate only when the worker that made
// the earlier call was killed inside the window between the supplier call and
// the done record; crashwindow explains each repeat by the crash storm's rules,
// and one it cannot explain fails the run. Each run uses a fresh namespace, so a
// second run on the same PostgreSQL or Redis starts clean.
//
// With Options.Pull (`oncegate demo --pull`) the workers are pull subscribers
// (`oncegate worker --pull`) receiving by streaming pull, sized by PullPlan,
// with the same orders, supplier, kill and verdict.
package demo

import (
	"context"
	"crypto/rand"
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
	// Orders is how many orders to publish, the poison order included, so
	// Orders−1 distinct orders reach the supplier. 0 means DefaultOrders; Run
	// refuses 1 or less otherwise (CheckSize).
	Orders int
	// Workers is how many worker processes run. 0 means DefaultWorkers; Run
	// refuses a negative count (CheckSize).
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
	// PubSub picks Pub/Sub: PubSubEmbedded (pstest in this process, with the
	// push bridge; needs only Go) or PubSubEmulator (Google's emulator pushing
	// itself: the one at PUBSUB_EMULATOR_HOST, or one the run starts, which needs
	// the google-cloud-cli-pubsub-emulator package and Java). Default:
	// PubSubEmulator when PUBSUB_EMULATOR_HOST is set, else PubSubEmbedded.
	PubSub string
	// Pull makes the workers pull subscribers (`oncegate worker --pull`,
	// runtime/pull) that receive by streaming pull from a pull subscription with
	// the same dead-letter policy, sized by PullPlan, instead of push endpoints
	// behind a balancer. There is no endpoint to post to, so the trouble the push
	// demo injects as extra pushes is published instead: a concurrent delivery
	// is a second copy published at once (the streams hand the two to different
	// workers), a transport redelivery a copy published once the first was
	// acked; both carry the same order_id, the key, as a real redelivery carries
	// the same message id. Works with both PubSub values (pstest implements
	// streaming pull).
	Pull bool
	// NoKill skips killing and restarting a worker.
	NoKill bool
	// Keep keeps the store (the SQLite file) after the run and prints the
	// command that inspects it. A failed, timed-out or interrupted run keeps it
	// anyway, unless it ended before publishing anything (its set-up failed):
	// then nothing was written to inspect. On the user's own PostgreSQL or
	// Redis the run's records stay under its namespace either way (Redis
	// expires them after Plan's TTL; SQL keeps them until oncegate purge
	// deletes them once expired).
	Keep bool
	// Namespace is the key namespace. Default: a fresh one per run,
	// "demo-<UTC time>-<4 hex digits>", so a run never sees an earlier run's
	// records.
	Namespace string
	// CLI is how the printed inspect command invokes the CLI. Default
	// "oncegate".
	CLI string
	// Timeout bounds the run. Default 3 minutes.
	Timeout time.Duration
	// Out receives progress and the report. Default os.Stdout.
	Out io.Writer
}

// The values of Options.PubSub.
const (
	PubSubEmbedded = "embedded"
	PubSubEmulator = "emulator"
)

// ErrInterrupted is returned when the caller's context ends the run (Ctrl-C).
var ErrInterrupted = errors.New("demo: interrupted")

// errTimedOut is the cause of the run's own deadline.
var errTimedOut = errors.New("demo: timed out")

// NewNamespace returns a fresh namespace: "demo-" + UTC time to the second +
// 4 random hex digits.
func NewNamespace(now time.Time) string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("demo-%s-%x", now.UTC().Format("20060102T150405"), b)
}

// Plan is the demo's scaled-down plan: a 3 s lease renewed every second, a 7 s
// work deadline and 2 s store phases inside a 15 s ack deadline (claim 2 s +
// work 7 s + complete 2 s + unknown mark 2 s, invariant 5), 1 s backoff, and
// the max delivery attempts the sizing model requires for them. The store
// phases get the production default, 2 s: three workers share one SQLite file,
// and with 1 s a loaded machine (the race detector, two cores) let completes
// time out, leaving records unknown and their redeliveries dead-lettered.
func Plan() sizing.Plan {
	p := sizing.Plan{
		Lease: 3 * time.Second, Heartbeat: time.Second, WorkDeadline: 7 * time.Second, StoreTimeout: 2 * time.Second,
		AckDeadline: 15 * time.Second, MinBackoff: time.Second, MaxBackoff: time.Second,
		TTL: 30 * time.Minute, ShutdownGrace: 2 * time.Second,
	}
	return p.WithDefaults()
}

// PullPlan is the demo's plan for pull workers (Options.Pull): Plan's numbers,
// the client's ack-deadline extension bounded to 10 s steps (the shortest the
// client allows) so a killed worker's messages come back within the 15 s ack
// deadline, 3 messages outstanding per worker against the SQL pool's 4
// connections (sqlgate.DefaultMaxConns on two cores; three workers on one
// SQLite file, as the push demo's bridge keeps 8 pushes in flight), and a 10 s
// shutdown grace, which leaves the drain 6 s after a release and an ack at the
// 2 s store timeout.
func PullPlan() sizing.PullPlan {
	p := sizing.PullPlan{
		Plan: sizing.Plan{
			Lease: 3 * time.Second, Heartbeat: time.Second, WorkDeadline: 7 * time.Second, StoreTimeout: 2 * time.Second,
			AckDeadline: 15 * time.Second, MinBackoff: time.Second, MaxBackoff: time.Second,
			TTL: 30 * time.Minute, ShutdownGrace: 10 * time.Second,
		},
		MaxExtensionPeriod: 10 * time.Second, MaxOutstandingMessages: 3, BackendConnections: 4,
	}
	return p.WithDefaults()
}

// The defaults of Options.Orders and Options.Workers (the CLI's --orders and
// --workers), and the smallest values CheckSize accepts.
const (
	DefaultOrders  = 300
	DefaultWorkers = 3
	MinOrders      = 2 // one poison order and at least one that reaches the supplier
	MinWorkers     = 1
)

// CheckSize refuses an order or worker count out of range, naming the flag
// and the range: orders must be at least MinOrders (one of them is the poison
// message, dead-lettered, so a run of n orders has n−1 distinct orders) and
// workers at least MinWorkers. The CLI passes its flags as given; Run passes
// Options after their zero values became the defaults.
func CheckSize(orders, workers int) error {
	if orders < MinOrders {
		return fmt.Errorf("demo: --orders %d: want %d or more (one order is the poison message, dead-lettered, so --orders n runs n−1 distinct orders)", orders, MinOrders)
	}
	if workers < MinWorkers {
		return fmt.Errorf("demo: --workers %d: want %d or more", workers, MinWorkers)
	}
	return nil
}

func (o *Options) defaults() error {
	if o.Orders == 0 {
		o.Orders = DefaultOrders
	}
	if o.Workers == 0 {
		o.Workers = DefaultWorkers
	}
	if err := CheckSize(o.Orders, o.Workers); err != nil {
		return err
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
	switch o.PubSub {
	case "":
		o.PubSub = PubSubEmbedded
		if o.Getenv("PUBSUB_EMULATOR_HOST") != "" {
			o.PubSub = PubSubEmulator
		}
	case PubSubEmbedded, PubSubEmulator:
	default:
		return fmt.Errorf("demo: --pubsub=%q; want %s or %s", o.PubSub, PubSubEmbedded, PubSubEmulator)
	}
	if o.Namespace == "" {
		o.Namespace = NewNamespace(time.Now())
	}
	if o.CLI == "" {
		o.CLI = "oncegate"
	}
	if len(o.WorkerCommand) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("demo: find this executable to start workers: %w", err)
		}
		o.WorkerCommand = []string{exe, "worker"}
		if o.Pull {
			o.WorkerCommand = append(o.WorkerCommand, "--pull")
		}
	}
	return nil
}

// store is the backend the workers share.
type store struct {
	env     []string // the workers' backend variables
	name    string   // for the report's first line
	inspect string   // the backend variables of the printed inspect command
	dir     string   // the SQLite file's directory, removed unless kept
}

// openStore picks the backend: the user's PostgreSQL/MySQL or Redis, else an
// SQLite file in a new temporary directory.
func openStore(getenv func(string) string) (store, error) {
	if dsn := getenv("ONCEGATE_SQL_DSN"); dsn != "" {
		return store{env: []string{"ONCEGATE_BACKEND=sql", "ONCEGATE_SQL_DSN=" + dsn},
			name:    "sql (" + strings.SplitN(dsn, ":", 2)[0] + ")",
			inspect: `ONCEGATE_BACKEND=sql ONCEGATE_SQL_DSN="$ONCEGATE_SQL_DSN"`}, nil
	}
	if addr := getenv("ONCEGATE_REDIS_ADDR"); addr != "" {
		return store{env: []string{"ONCEGATE_BACKEND=redis", "ONCEGATE_REDIS_ADDR=" + addr},
			name: "redis", inspect: `ONCEGATE_BACKEND=redis ONCEGATE_REDIS_ADDR="$ONCEGATE_REDIS_ADDR"`}, nil
	}
	dir, err := os.MkdirTemp("", "oncegate-demo-")
	if err != nil {
		return store{}, err
	}
	file := filepath.Join(dir, "records.db")
	return store{env: []string{"ONCEGATE_BACKEND=sql", "ONCEGATE_SQL_DSN=sqlite:" + file}, name: "sqlite " + file,
		inspect: "ONCEGATE_BACKEND=sql ONCEGATE_SQL_DSN=sqlite:" + file, dir: dir}, nil
}

// Run runs the demo and returns its report. The error is non-nil when the run
// could not be made, was interrupted (ErrInterrupted: ctx ended), timed out, or
// its verdict failed (an order held twice, lost, or repeated without a kill to
// explain it, or a worker crashed).
func Run(ctx context.Context, o Options) (Report, error) {
	if err := o.defaults(); err != nil {
		return Report{}, err
	}
	parent := ctx
	ctx, cancel := context.WithTimeoutCause(ctx, o.Timeout, errTimedOut)
	defer cancel()
	st, err := openStore(o.Getenv)
	if err != nil {
		return Report{}, err
	}
	r := &run{o: o, plan: Plan(), store: st, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if o.Pull {
		r.pullPlan = PullPlan()
		r.plan = r.pullPlan.Plan
	}
	rep, err := r.runAll(ctx)
	if parent.Err() != nil {
		err = ErrInterrupted
	}
	// A run that failed before it published anything wrote no record, so
	// there is nothing to inspect.
	keep := r.published.Load() && (o.Keep || err != nil || !rep.OK())
	r.closing(rep, err, keep)
	if !keep && st.dir != "" {
		_ = os.RemoveAll(st.dir)
	} else {
		rep.StoreDir = st.dir
	}
	if err == nil && !rep.OK() {
		err = errors.New("demo: the verdict failed (see the report)")
	}
	return rep, err
}

// runAll sets up, executes and tears down, and prints the report unless the
// run was interrupted.
func (r *run) runAll(ctx context.Context) (Report, error) {
	defer r.tearDown()
	if err := r.setUp(ctx, r.store.env); err != nil {
		return Report{}, err
	}
	rep, err := r.execute(ctx)
	if !errors.Is(err, context.Canceled) {
		rep.print(r.o.Out)
	}
	return rep, err
}

// closing prints how the run ended and, when the store is kept, how to
// inspect it.
func (r *run) closing(rep Report, err error, keep bool) {
	w := r.o.Out
	if errors.Is(err, ErrInterrupted) {
		fmt.Fprintf(w, "interrupted: no verdict (namespace %s)\n", r.o.Namespace)
	}
	if !keep {
		return
	}
	key := "PO-00001"
	if (err == nil || errors.Is(err, errTimedOut)) && len(rep.Problems) > 0 && rep.Problems[0].Order != "" {
		key = rep.Problems[0].Order
	}
	fmt.Fprintf(w, "store kept; inspect an order's record with:\n  %s ONCEGATE_NAMESPACE=%s %s inspect %s\n",
		r.store.inspect, r.o.Namespace, r.o.CLI, key)
	if r.store.dir != "" {
		fmt.Fprintf(w, "remove it with: rm -r %s\n", r.store.dir)
	}
}
