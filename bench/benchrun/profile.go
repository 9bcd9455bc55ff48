package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Profile is where the gated path's CPU goes: a CPU profile of bench/target
// (memory backend, so no store I/O) under load.
type Profile struct {
	Concurrency int
	Seconds     int
	Command     string
	Top         string // go tool pprof -top output, trimmed
}

// profileGated profiles t's /gated endpoint at concurrency c for secs seconds.
func profileGated(ctx context.Context, cfg config, t *target, c, secs int) (*Profile, error) {
	done := make(chan error, 1)
	go func() {
		_, err := runLoad(ctx, filepath.Join(cfg.work, "loadgen"), "-url", t.url("/gated"), "-c", strconv.Itoa(c),
			"-duration", strconv.Itoa(secs+2)+"s", "-warmup", "1s", "-id-prefix", "profile")
		done <- err
	}()
	select {
	case <-time.After(1500 * time.Millisecond):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	path := filepath.Join(cfg.work, "gated.cpu.prof")
	err := fetch(ctx, t.url("/debug/pprof/profile?seconds="+strconv.Itoa(secs)), path)
	if lerr := <-done; err == nil {
		err = lerr
	}
	if err != nil {
		return nil, err
	}
	// Only the handler's subtree: the HTTP server's own work and the garbage
	// collector's background workers are the same for the bare handler.
	args := []string{"tool", "pprof", "-top", "-cum", "-nodecount=45", `-focus=push\.\(\*Guard\)\.ServeHTTP`, filepath.Join(cfg.work, "target"), path}
	out, err := exec.CommandContext(ctx, "go", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return &Profile{Concurrency: c, Seconds: secs, Command: `go tool pprof -top -cum -focus='push\.\(\*Guard\)\.ServeHTTP' target gated.cpu.prof`, Top: trimProfile(string(out))}, nil
}

func fetch(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// trimProfile drops pprof's header lines that name files and build ids.
func trimProfile(s string) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if strings.HasPrefix(l, "File:") || strings.HasPrefix(l, "Build ID:") || strings.HasPrefix(l, "Time:") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}
