// Command benchrun runs every push-path benchmark of bench/ in one go and
// writes the results into docs/BENCHMARKS.md, between the markers
// "<!-- scripts/bench:begin -->" and "<!-- scripts/bench:end -->" (appended
// at the end when the file has none), leaving the rest of the file as it is.
// scripts/bench runs it from the repository root.
//
// In order, it:
//
//  1. counts round trips per message and under contention (go test
//     ./bench/pathcost/ with ONCEGATE_BENCH_REPORT);
//  2. measures the gateway's overhead: for each backend it starts bench/target
//     and, for each concurrency, runs bench/loadgen (a separate process, over
//     loopback) against /bare, /floor and /gated in the order bare, floor,
//     gated, gated, floor, bare per round;
//  3. measures the worker's resident memory over -messages distinct messages
//     with a short ttl, with purge running, without it, and on Redis;
//  4. runs the memory footprint benchmarks (go test -bench ./bench/footprint/)
//     and benchstat;
//  5. runs the growth benchmark (go test -bench ./bench/growth/) and benchstat.
//
// Servers come from ONCEGATE_TEST_REDIS_ADDR, ONCEGATE_TEST_POSTGRES_DSN and
// ONCEGATE_TEST_MYSQL_DSN, else the local defaults (flags override both).
//
// Every run saves what it measured as results.json in its work directory;
// benchrun -from that/results.json writes the section again from it without
// measuring, after a change to the text.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/oncegate/oncegate/bench/stores"
	"github.com/oncegate/oncegate/internal/testenv"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		os.Exit(1)
	}
}

// config is benchrun's flags.
type config struct {
	out      string
	work     string
	duration time.Duration
	warmup   time.Duration
	rounds   int
	// targetRounds is the least number of rounds for Redis at concurrency 16,
	// the row the overhead target is judged on.
	targetRounds int
	backends     []stores.Kind
	concurrency  []int
	messages     int
	growthCount  int
	growthTime   string
	footCount    int
	skip         map[string]bool
	srv          servers
	from         string
}

// servers locate the shared servers.
type servers struct {
	Redis    string // host:port
	Postgres string // postgres:// URL
	MySQL    string // go-sql-driver DSN
}

func parseFlags() (config, error) {
	var c config
	var backends, conc, skip string
	flag.StringVar(&c.out, "out", "docs/BENCHMARKS.md", "document to write the results into")
	flag.StringVar(&c.work, "work", "", "directory for binaries and raw outputs (default: a new temporary directory, kept)")
	flag.DurationVar(&c.duration, "duration", 3*time.Second, "measured time of each load run")
	flag.DurationVar(&c.warmup, "warmup", time.Second, "unmeasured time before each load run")
	flag.IntVar(&c.rounds, "rounds", 1, "rounds of bare, floor, gated, gated, floor, bare per backend and concurrency")
	flag.IntVar(&c.targetRounds, "target-rounds", 3, "rounds for Redis at concurrency 16, the row the overhead target is judged on")
	flag.StringVar(&backends, "backends", "memory,sqlite,postgres,mysql,redis,datastore", "backends of the overhead runs")
	flag.StringVar(&conc, "concurrency", "1,16,64", "concurrencies of the overhead runs")
	flag.IntVar(&c.messages, "messages", 100_000, "distinct messages of each memory run")
	flag.IntVar(&c.growthCount, "growth-count", 10, "go test -count of the growth benchmark")
	flag.StringVar(&c.growthTime, "growth-benchtime", "2000x", "go test -benchtime of the growth benchmark")
	flag.IntVar(&c.footCount, "footprint-count", 6, "go test -count of the footprint benchmarks")
	flag.StringVar(&skip, "skip", "", "comma-separated steps to skip: roundtrips, overhead, memory, footprint, growth (their sections then say so)")
	flag.StringVar(&c.srv.Redis, "redis", env("ONCEGATE_TEST_REDIS_ADDR", "127.0.0.1:6379"), "Redis host:port")
	flag.StringVar(&c.srv.Postgres, "postgres", env("ONCEGATE_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL URL")
	flag.StringVar(&c.srv.MySQL, "mysql", env("ONCEGATE_TEST_MYSQL_DSN", "root@tcp(127.0.0.1:3306)/test"), "MySQL/MariaDB DSN (go-sql-driver form or mysql:// URL)")
	flag.StringVar(&c.from, "from", "", "render the section from this results.json of an earlier run instead of measuring")
	flag.Parse()
	for _, b := range strings.Split(backends, ",") {
		k, err := stores.ParseKind(strings.TrimSpace(b))
		if err != nil {
			return c, fmt.Errorf("-backends: %w", err)
		}
		c.backends = append(c.backends, k)
	}
	for _, s := range strings.Split(conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return c, fmt.Errorf("-concurrency: %q is not a positive number", s)
		}
		c.concurrency = append(c.concurrency, n)
	}
	c.skip = map[string]bool{}
	for _, s := range strings.Split(skip, ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.skip[s] = true
		}
	}
	if c.rounds < 1 || c.targetRounds < 1 || c.messages < 1 || c.growthCount < 1 || c.footCount < 1 {
		return c, fmt.Errorf("-rounds, -target-rounds, -messages, -growth-count and -footprint-count must be at least 1")
	}
	dsn, err := testenv.MySQLDriverDSN(c.srv.MySQL)
	if err != nil {
		return c, fmt.Errorf("-mysql: %w", err)
	}
	c.srv.MySQL = dsn
	return c, nil
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Results is everything one run measured; it is also saved as results.json
// in the work directory.
type Results struct {
	Started, Finished time.Time
	Machine           Machine
	Config            RunConfig
	Paths             *PathResults      `json:",omitempty"`
	Overhead          []OverheadRow     `json:",omitempty"`
	RedisScripts      *ScriptStats      `json:",omitempty"`
	Profile           *Profile          `json:",omitempty"`
	Memory            []MemoryRun       `json:",omitempty"`
	Footprint         *GoBench          `json:",omitempty"`
	Growth            *GoBench          `json:",omitempty"`
	Skipped           map[string]bool   `json:",omitempty"`
	Errors            map[string]string `json:",omitempty"`
}

// RunConfig records the settings the figures were taken with.
type RunConfig struct {
	Duration, Warmup time.Duration
	Rounds           int
	TargetRounds     int
	Concurrency      []int
	Messages         int
	Commands         []string
}

func run() error {
	cfg, err := parseFlags()
	if err != nil {
		return err
	}
	if cfg.from != "" {
		return rerender(cfg.from, cfg.out)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cfg.work == "" {
		if cfg.work, err = os.MkdirTemp("", "oncegate-bench-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(cfg.work, 0o755); err != nil {
		return err
	}
	logf("work directory %s", cfg.work)
	res := &Results{Started: time.Now(), Skipped: cfg.skip, Errors: map[string]string{},
		Config: RunConfig{Duration: cfg.duration, Warmup: cfg.warmup, Rounds: cfg.rounds, TargetRounds: cfg.targetRounds,
			Concurrency: cfg.concurrency, Messages: cfg.messages}}
	res.Machine = readMachine(ctx, cfg.srv)
	if err := build(ctx, cfg.work); err != nil {
		return err
	}
	steps := []struct {
		name string
		run  func() error
	}{
		{"roundtrips", func() error { return stepPaths(ctx, cfg, res) }},
		{"overhead", func() error { return stepOverhead(ctx, cfg, res) }},
		{"memory", func() error { return stepMemory(ctx, cfg, res) }},
		{"footprint", func() error { return stepFootprint(ctx, cfg, res) }},
		{"growth", func() error { return stepGrowth(ctx, cfg, res) }},
	}
	for _, s := range steps {
		if cfg.skip[s.name] {
			logf("%s: skipped", s.name)
			continue
		}
		logf("%s", s.name)
		if err := s.run(); err != nil {
			if ctx.Err() != nil {
				return err
			}
			logf("%s failed: %v", s.name, err)
			res.Errors[s.name] = err.Error()
		}
	}
	res.Finished = time.Now()
	res.Machine.LoadEnd = loadAverage()
	raw, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cfg.work, "results.json"), raw, 0o644); err != nil {
		return err
	}
	if err := writeSection(cfg.out, render(res)); err != nil {
		return err
	}
	logf("wrote %s (raw results in %s)", cfg.out, cfg.work)
	if len(res.Errors) > 0 {
		return fmt.Errorf("%d steps failed (see %s): %v", len(res.Errors), cfg.out, res.Errors)
	}
	return nil
}

// rerender writes the section for the results an earlier run saved, so the
// text can change without measuring again.
func rerender(from, out string) error {
	raw, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	var res Results
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	if err := writeSection(out, render(&res)); err != nil {
		return err
	}
	logf("wrote %s from %s", out, from)
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchrun %s: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
