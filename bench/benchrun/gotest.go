package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/oncegate/oncegate/bench/pathcost"
)

// PathResults are the counted figures of ./bench/pathcost.
type PathResults struct {
	Command string
	Report  pathcost.Report
}

// testEnv is the environment of every go test run: the servers benchrun uses,
// through the variables internal/testenv reads.
func testEnv(srv servers) []string {
	return append(os.Environ(),
		"ONCEGATE_TEST_REDIS_ADDR="+srv.Redis,
		"ONCEGATE_TEST_POSTGRES_DSN="+srv.Postgres,
		"ONCEGATE_TEST_MYSQL_DSN="+srv.MySQL,
	)
}

// goCmd runs go with args in the module root, stdout to outFile when set.
func goCmd(ctx context.Context, srv servers, outFile string, extraEnv []string, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Env = append(testEnv(srv), extraEnv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err := cmd.Run()
	if outFile != "" {
		if werr := os.WriteFile(outFile, stdout.Bytes(), 0o644); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return fmt.Errorf("go %s: %w\n%s%s", strings.Join(args, " "), err, tail(stdout.String(), 40), tail(stderr.String(), 40))
	}
	return nil
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n") + "\n"
}

func stepPaths(ctx context.Context, cfg config, res *Results) error {
	report := filepath.Join(cfg.work, "pathcost.json")
	args := []string{"test", "-count=1", "-run", "^(TestRoundTrips|TestContention)$", "./bench/pathcost/"}
	res.Config.Commands = append(res.Config.Commands, "go "+strings.Join(args, " "))
	if err := goCmd(ctx, cfg.srv, "", []string{"CI=true", pathcost.ReportEnv + "=" + report}, args...); err != nil {
		return err
	}
	r, err := pathcost.ReadReport(report)
	if err != nil {
		return err
	}
	res.Paths = &PathResults{Command: "go " + strings.Join(args, " "), Report: r}
	return nil
}

// GoBench is one go test -bench run and its benchstat summary.
type GoBench struct {
	Commands  []string
	Benchstat string
	// Medians maps a benchmark's full name (without the -GOMAXPROCS suffix) and
	// unit to the median of its samples.
	Medians map[string]map[string]float64
}

// goBench runs go test -bench with args into name.txt in the work directory,
// then benchstat with statArgs.
func goBench(ctx context.Context, cfg config, name string, args, statArgs []string) (*GoBench, error) {
	raw := filepath.Join(cfg.work, name+".txt")
	args = append([]string{"test"}, args...)
	statArgs = append(append([]string{"tool", "benchstat"}, statArgs...), raw)
	gb := &GoBench{Commands: []string{
		"go " + strings.Join(args, " ") + " > " + name + ".txt",
		"go " + strings.Join(statArgs[:len(statArgs)-1], " ") + " " + name + ".txt",
	}}
	if err := goCmd(ctx, cfg.srv, raw, nil, args...); err != nil {
		return gb, err
	}
	out, err := exec.CommandContext(ctx, "go", statArgs...).CombinedOutput()
	if err != nil {
		return gb, fmt.Errorf("benchstat: %w: %s", err, out)
	}
	gb.Benchstat = strings.TrimSpace(string(out))
	gb.Medians, err = medians(raw)
	return gb, err
}

// medians reads go test -bench output and returns, per benchmark and unit, the
// median of its samples.
func medians(path string) (map[string]map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	samples := map[string]map[string][]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		name := fields[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		name = strings.TrimPrefix(name, "Benchmark")
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			if samples[name] == nil {
				samples[name] = map[string][]float64{}
			}
			samples[name][fields[i+1]] = append(samples[name][fields[i+1]], v)
		}
	}
	out := map[string]map[string]float64{}
	for name, units := range samples {
		out[name] = map[string]float64{}
		for unit, vs := range units {
			out[name][unit] = median(vs)
		}
	}
	return out, sc.Err()
}

func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(vs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func stepFootprint(ctx context.Context, cfg config, res *Results) error {
	gb, err := goBench(ctx, cfg, "footprint",
		[]string{"-run", "^$", "-bench", ".", "-benchtime", "100000x", "-count", strconv.Itoa(cfg.footCount), "./bench/footprint/"},
		nil)
	res.Footprint = gb
	return err
}

func stepGrowth(ctx context.Context, cfg config, res *Results) error {
	gb, err := goBench(ctx, cfg, "growth",
		[]string{"-run", "^$", "-bench", "Growth", "-benchtime", cfg.growthTime, "-count", strconv.Itoa(cfg.growthCount), "-timeout", "60m", "./bench/growth/"},
		nil)
	res.Growth = gb
	return err
}
