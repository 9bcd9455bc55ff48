package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/oncegate/oncegate/bench/stores"
)

// MemoryRun is one worker process taking Messages distinct messages.
type MemoryRun struct {
	Name    string
	Backend string
	Args    []string
	Load    []string
	RPS     float64
	Errors  int
	// Samples are the target's /stats every tenth of the messages.
	Samples []MemorySample
}

// MemorySample is the worker's state after Completed messages.
type MemorySample struct {
	Completed int
	RSSBytes  int64
	HeapBytes uint64
	Records   int
}

// memoryTTL is the short ttl of the memory runs: records may be deleted this
// long after they are done. Purge runs every memoryPurge, so the memory
// backend holds about (memoryTTL + memoryPurge) × req/s records at a time.
const (
	memoryTTL   = time.Second
	memoryLease = time.Second
	memoryPurge = 500 * time.Millisecond
	memoryCache = 1000
)

func stepMemory(ctx context.Context, cfg config, res *Results) error {
	common := []string{"-ttl", memoryTTL.String(), "-lease", memoryLease.String(), "-cache", strconv.Itoa(memoryCache)}
	runs := []struct {
		name string
		k    stores.Kind
		args []string
	}{
		{"memory backend, purge every " + memoryPurge.String(), stores.Memory, append([]string{"-purge", memoryPurge.String()}, common...)},
		{"memory backend, no purge", stores.Memory, common},
		{"Redis backend (Redis expires records itself)", stores.Redis, common},
	}
	every := max(1, cfg.messages/10)
	for i, r := range runs {
		name := fmt.Sprintf("oncegate_bench_%d_mem%d", os.Getpid(), i)
		args := append(targetArgs(cfg, r.k, name), r.args...)
		t, err := startTarget(ctx, filepath.Join(cfg.work, "target"), args...)
		if err != nil {
			return err
		}
		load := []string{"-url", t.url("/gated"), "-c", "16", "-n", strconv.Itoa(cfg.messages),
			"-stats", t.url("/stats"), "-stats-every", strconv.Itoa(every), "-id-prefix", name}
		lr, err := runLoad(ctx, filepath.Join(cfg.work, "loadgen"), load...)
		if serr := t.stop(); err == nil && serr != nil {
			err = serr
		}
		if err != nil {
			return err
		}
		m := MemoryRun{Name: r.name, Backend: string(r.k), Args: args, Load: load, RPS: lr.RPS, Errors: lr.Errors}
		for _, s := range lr.Samples {
			m.Samples = append(m.Samples, MemorySample{Completed: s.Completed, RSSBytes: s.Stats.RSSBytes,
				HeapBytes: s.Stats.HeapInuseBytes, Records: s.Stats.Records})
		}
		logf("memory %s: %d samples, %.0f req/s", r.name, len(m.Samples), lr.RPS)
		res.Memory = append(res.Memory, m)
	}
	return nil
}
