package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// build compiles bench/target and bench/loadgen into dir.
func build(ctx context.Context, dir string) error {
	for _, pkg := range []string{"target", "loadgen"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, pkg), "./bench/"+pkg)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build ./bench/%s: %w", pkg, err)
		}
	}
	return nil
}

// target is a running bench/target process.
type target struct {
	cmd    *exec.Cmd
	addr   string
	stderr *bytes.Buffer
	args   []string
}

// startTarget starts the target binary with args and waits for the line
// naming its address.
func startTarget(ctx context.Context, bin string, args ...string) (*target, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	t := &target{cmd: cmd, stderr: new(bytes.Buffer), args: args}
	cmd.Stderr = t.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start target: %w", err)
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		for sc.Scan() { // keep draining
		}
	}()
	select {
	case l, ok := <-line:
		var v struct{ Addr string }
		if !ok || json.Unmarshal([]byte(l), &v) != nil || v.Addr == "" {
			_ = t.stop()
			return nil, fmt.Errorf("target %s did not start: %q %s", strings.Join(args, " "), l, t.stderr)
		}
		t.addr = v.Addr
	case <-time.After(time.Minute):
		_ = t.stop()
		return nil, fmt.Errorf("target %s: no address after a minute: %s", strings.Join(args, " "), t.stderr)
	}
	return t, nil
}

// url is the target's URL for path.
func (t *target) url(path string) string { return "http://" + t.addr + path }

// stop sends SIGTERM to the target's process (by its pid) and waits for it.
func (t *target) stop() error {
	if t.cmd.Process == nil {
		return nil
	}
	_ = t.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- t.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil && t.stderr.Len() > 0 {
			return fmt.Errorf("target: %w: %s", err, t.stderr)
		}
		return err
	case <-time.After(30 * time.Second):
		_ = t.cmd.Process.Kill()
		return errors.New("target did not stop within 30s after SIGTERM; killed")
	}
}

// loadResult is what benchrun reads of the JSON line bench/loadgen prints
// (see its Result).
type loadResult struct {
	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	Seconds  float64 `json:"seconds"`
	RPS      float64 `json:"rps"`
	P50      float64 `json:"p50_us"`
	P99      float64 `json:"p99_us"`
	Samples  []struct {
		Completed int         `json:"completed"`
		Stats     targetStats `json:"stats"`
	} `json:"samples"`
}

// targetStats is the target's GET /stats answer.
type targetStats struct {
	RSSBytes       int64   `json:"rss_bytes"`
	HeapInuseBytes uint64  `json:"heap_inuse_bytes"`
	CPUSeconds     float64 `json:"cpu_seconds"`
	Records        int     `json:"records"`
}

// runLoad runs the loadgen binary with args and parses its result.
func runLoad(ctx context.Context, bin string, args ...string) (loadResult, error) {
	var r loadResult
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return r, fmt.Errorf("loadgen %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return r, fmt.Errorf("loadgen output %q: %w", out, err)
	}
	return r, nil
}
