package main

import (
	"strings"
	"testing"
)

func TestBenchstatSpread(t *testing.T) {
	out := `goos: linux

                                            │ /tmp/ogg4.txt │
                                            │    sec/op     │
Growth/store=redis/keys=rand-2                 215.4µ ± 19%

                                            │ /tmp/ogg4.txt │
                                            │     1m/1k     │
Growth/store=redis/keys=rand-2                 987.4m ± 12%
Growth/store=sqlite/keys=rand-2                 1.258 ± 28%
geomean                                         1.072`
	for prefix, want := range map[string]string{
		"Growth/store=redis/keys=rand-":  "± 12%",
		"Growth/store=sqlite/keys=rand-": "± 28%",
		"Growth/store=none-":             "",
	} {
		if got := benchstatSpread(out, "1m/1k", prefix); got != want {
			t.Errorf("benchstatSpread(%q) = %q, want %q", prefix, got, want)
		}
	}
}

// TestRender renders a synthetic run and checks the verdicts follow the
// figures: the overhead target missed by 60%, growth met and missed, memory
// bounded with purge and growing without.
func TestRender(t *testing.T) {
	agg := func(p50s ...float64) *Agg {
		a := &Agg{}
		for _, p := range p50s {
			a.add(loadResult{P50: p, P99: 2 * p, Requests: 1000, Seconds: 1})
		}
		return a
	}
	r := &Results{
		Config: RunConfig{Rounds: 1, TargetRounds: 1, Messages: 100},
		Overhead: []OverheadRow{
			{Backend: "redis", Concurrency: 16, Runs: map[string]*Agg{
				"bare": agg(1000, 1000), "floor": agg(1200, 1200), "gated": agg(2320, 2320)}},
			{Backend: "redis", Concurrency: 1, Runs: map[string]*Agg{
				"bare": agg(100, 100), "floor": agg(150, 150), "gated": agg(140, 140)}},
		},
		Growth: &GoBench{Medians: map[string]map[string]float64{
			"Growth/store=redis/keys=rand":  {"ns/op-1k": 100e3, "ns/op-1m": 101e3, "1m/1k": 1.01},
			"Growth/store=sqlite/keys=rand": {"ns/op-1k": 100e3, "ns/op-1m": 150e3, "1m/1k": 1.5},
		}},
		Memory: []MemoryRun{
			{Name: "memory backend, purge every 500ms", Samples: []MemorySample{{Completed: 20, RSSBytes: 100}, {Completed: 100, RSSBytes: 105}}},
			{Name: "memory backend, no purge", Samples: []MemorySample{{Completed: 20, RSSBytes: 100}, {Completed: 100, RSSBytes: 200}}},
		},
	}
	// budget = 1.25 × 1000 + 200 = 1450; 2320 / 1450 = 1.6.
	out := render(r)
	for _, want := range []string{
		"**missed by +60%** (1.60× the budget)",
		"gated/budget per round: 1.60",
		"| Growth store=redis/keys=rand: 1m/1k < 1.3 | 100 µs → 101 µs per message, ratio 1.01 | met |",
		"**missed by +15%** (limit 1.3)",
		"**Growth, store=sqlite/keys=rand: 1m/1k = 1.50",
		"| 1.05× | bounded |",
		"grows (2.00×), as it must without purge: the control",
		"no difference this run can resolve",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("render output lacks %q", want)
		}
	}
}

func TestTableAndSection(t *testing.T) {
	var d doc
	if d.section("Growth", false) {
		t.Error("section(…, false) reported measured")
	}
	d.table("case", "fresh: calls:", "1m / 1k:", "notes")
	want := "### Growth\n\nNot measured in this run.\n\n| case | fresh: calls | 1m / 1k | notes |\n|---|--:|--:|---|\n"
	if got := d.String(); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
