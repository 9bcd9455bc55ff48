package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/bench/stores"
)

// order is one round of runs: bench/target's endpoints there and back, so
// that a drift in the machine's load during a round weighs on each alike.
var order = []string{"bare", "floor", "gated", "gated", "floor", "bare"}

// OverheadRow is one backend at one concurrency.
type OverheadRow struct {
	Backend     string
	Concurrency int
	// By endpoint: bare, floor, gated.
	Runs map[string]*Agg
}

// Agg sums the load runs of one endpoint.
type Agg struct {
	Runs     int
	Requests int
	Errors   int
	Seconds  float64
	// P50 and P99 are the mean over runs of each run's percentile, in µs.
	P50, P99 float64
	// CPUSeconds is the target's CPU time over the measured windows.
	CPUSeconds float64
	// P50s are the runs' own p50s, in µs, in the order they ran.
	P50s []float64
}

// RPS is requests per second over every measured window.
func (a *Agg) RPS() float64 {
	if a == nil || a.Seconds == 0 {
		return 0
	}
	return float64(a.Requests) / a.Seconds
}

// CPUPerRequest is the target's CPU time per request, in µs.
func (a *Agg) CPUPerRequest() float64 {
	if a == nil || a.Requests == 0 {
		return 0
	}
	return a.CPUSeconds / float64(a.Requests) * 1e6
}

func (a *Agg) add(r loadResult) {
	n := float64(a.Runs)
	a.P50 = (a.P50*n + r.P50) / (n + 1)
	a.P99 = (a.P99*n + r.P99) / (n + 1)
	a.Runs++
	a.P50s = append(a.P50s, r.P50)
	a.Requests += r.Requests
	a.Errors += r.Errors
	a.Seconds += r.Seconds
	if len(r.Samples) >= 2 {
		a.CPUSeconds += r.Samples[len(r.Samples)-1].Stats.CPUSeconds - r.Samples[0].Stats.CPUSeconds
	}
}

// ScriptStats are Redis's own per-call times (INFO commandstats) over the
// Redis overhead runs: what a claim or complete script costs the server next
// to a PING.
type ScriptStats struct {
	EvalshaCalls       int64
	EvalshaUsecPerCall float64
	PingCalls          int64
	PingUsecPerCall    float64
}

// targetArgs are the flags that put bench/target on backend k.
func targetArgs(cfg config, k stores.Kind, name string) []string {
	args := []string{"-backend", string(k), "-name", name, "-pprof"}
	switch k {
	case stores.Postgres:
		args = append(args, "-dsn", cfg.srv.Postgres)
	case stores.MySQL:
		args = append(args, "-dsn", cfg.srv.MySQL)
	case stores.Redis:
		args = append(args, "-dsn", cfg.srv.Redis)
	case stores.SQLite:
		args = append(args, "-dsn", filepath.Join(cfg.work, name+".db"))
	}
	return args
}

func stepOverhead(ctx context.Context, cfg config, res *Results) error {
	bin := func(n string) string { return filepath.Join(cfg.work, n) }
	for _, k := range cfg.backends {
		name := fmt.Sprintf("oncegate_bench_%d_%s", os.Getpid(), k)
		t, err := startTarget(ctx, bin("target"), targetArgs(cfg, k, name)...)
		if err != nil {
			return err
		}
		var before map[string][2]float64
		if k == stores.Redis {
			before = commandStats(ctx, cfg.srv.Redis)
		}
		for _, c := range cfg.concurrency {
			row := OverheadRow{Backend: string(k), Concurrency: c, Runs: map[string]*Agg{}}
			rounds := cfg.rounds
			if k == stores.Redis && c == overheadC {
				rounds = max(rounds, cfg.targetRounds) // the row the target is judged on
			}
			for round := range rounds {
				for i, ep := range order {
					r, err := runLoad(ctx, bin("loadgen"), "-url", t.url("/"+ep), "-c", strconv.Itoa(c),
						"-duration", cfg.duration.String(), "-warmup", cfg.warmup.String(),
						"-stats", t.url("/stats"),
						"-id-prefix", fmt.Sprintf("%s-c%d-r%d-%d-%s", k, c, round, i, ep))
					if err != nil {
						_ = t.stop()
						return err
					}
					if row.Runs[ep] == nil {
						row.Runs[ep] = &Agg{}
					}
					row.Runs[ep].add(r)
					logf("overhead %s c=%d %s: %.0f req/s p50 %.0fµs p99 %.0fµs errors %d",
						k, c, ep, r.RPS, r.P50, r.P99, r.Errors)
				}
			}
			res.Overhead = append(res.Overhead, row)
		}
		if k == stores.Redis {
			res.RedisScripts = scriptStats(before, commandStats(ctx, cfg.srv.Redis))
		}
		if k == stores.Memory {
			p, err := profileGated(ctx, cfg, t, overheadC, max(5, 2*int(cfg.duration.Seconds())))
			if err != nil {
				logf("profile: %v", err)
			}
			res.Profile = p
		}
		if err := t.stop(); err != nil {
			return fmt.Errorf("stop target %s: %w", k, err)
		}
		if k == stores.SQLite {
			for _, suffix := range []string{".db", ".db-wal", ".db-shm"} {
				_ = os.Remove(filepath.Join(cfg.work, name+suffix))
			}
		}
	}
	return nil
}

// commandStats reads INFO commandstats: command → (calls, usec).
func commandStats(ctx context.Context, addr string) map[string][2]float64 {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true})
	defer c.Close()
	info, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil
	}
	out := map[string][2]float64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		var calls, usec float64
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			f, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				calls = f
			case "usec":
				usec = f
			}
		}
		out[strings.TrimPrefix(name, "cmdstat_")] = [2]float64{calls, usec}
	}
	return out
}

func scriptStats(before, after map[string][2]float64) *ScriptStats {
	if before == nil || after == nil {
		return nil
	}
	d := func(cmd string) (int64, float64) {
		calls := after[cmd][0] - before[cmd][0]
		if calls <= 0 {
			return 0, 0
		}
		return int64(calls), (after[cmd][1] - before[cmd][1]) / calls
	}
	s := &ScriptStats{}
	s.EvalshaCalls, s.EvalshaUsecPerCall = d("evalsha")
	s.PingCalls, s.PingUsecPerCall = d("ping")
	return s
}
