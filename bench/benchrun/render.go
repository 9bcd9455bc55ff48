package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/oncegate/oncegate/bench/stores"
)

// Targets, from the performance issue: the gateway's p50 on Redis at
// concurrency 16 within 1.25 × the bare handler's plus the two store round
// trips; growth 1m/1k under 1.3; the worker's memory bounded (here: resident
// memory after all messages within 1.2 × that after a fifth of them).
const (
	overheadFactor = 1.25
	overheadC      = 16
	growthLimit    = 1.3
	memoryLimit    = 1.2
)

// doc accumulates markdown.
type doc struct{ strings.Builder }

func (d *doc) p(format string, args ...any) { fmt.Fprintf(d, format+"\n", args...) }

// section starts a "###" section. When measured is false it says so and
// reports false: the caller writes nothing more.
func (d *doc) section(title string, measured bool) bool {
	d.p("### %s", title)
	d.p("")
	if !measured {
		d.p("Not measured in this run.")
		d.p("")
	}
	return measured
}

// table writes a table's head row and alignment row; a column whose name ends
// in ":" is right-aligned (the colon is not shown). Rows follow with d.p.
func (d *doc) table(cols ...string) {
	head, align := "|", "|"
	for _, c := range cols {
		name, right := strings.CutSuffix(c, ":")
		head += " " + name + " |"
		align += map[bool]string{false: "---|", true: "--:|"}[right]
	}
	d.p("%s", head)
	d.p("%s", align)
}

// render returns the section benchrun writes between the markers.
func render(r *Results) string {
	var d doc
	d.p("## Push path: overhead, round trips, growth, memory, contention")
	d.p("")
	d.p("Written by `scripts/bench` (bench/benchrun) on %s in %s. Everything between the",
		r.Started.UTC().Format("2006-01-02 15:04 MST"), r.Finished.Sub(r.Started).Round(time.Second))
	d.p("`scripts/bench` markers is rewritten by each run: change bench/benchrun, not this text.")
	d.p("")
	renderSummary(&d, r)
	renderMethod(&d, r)
	renderOverhead(&d, r)
	renderPaths(&d, r)
	renderContention(&d, r)
	renderGrowth(&d, r)
	renderMemory(&d, r)
	renderMisses(&d, r)
	if len(r.Errors) > 0 {
		d.section("Steps that failed in this run", true)
		for _, k := range slices.Sorted(maps.Keys(r.Errors)) {
			d.p("- %s: `%s`", k, oneLine(r.Errors[k]))
		}
		d.p("")
	}
	return d.String()
}

// overheadRow returns the row of backend at concurrency c, or nil.
func overheadRow(r *Results, backend string, c int) *OverheadRow {
	i := slices.IndexFunc(r.Overhead, func(o OverheadRow) bool { return o.Backend == backend && o.Concurrency == c })
	if i < 0 {
		return nil
	}
	return &r.Overhead[i]
}

// runs returns the bare, floor and gated runs of row (nil: none); ok reports
// all three.
func (row *OverheadRow) runs() (bare, floor, gated *Agg, ok bool) {
	if row != nil {
		bare, floor, gated = row.Runs["bare"], row.Runs["floor"], row.Runs["gated"]
	}
	return bare, floor, gated, bare != nil && floor != nil && gated != nil
}

// budget returns the gated p50, the budget 1.25 × bare p50 + (floor p50 − bare
// p50) and their ratio: over all runs of row, then per round (each endpoint
// runs twice per round).
func (row *OverheadRow) budget() (gated, budget, ratio float64, perRound []float64, ok bool) {
	b, f, g, ok := row.runs()
	if !ok {
		return 0, 0, 0, nil, false
	}
	of := func(bare, floor float64) float64 { return overheadFactor*bare + math.Max(0, floor-bare) }
	for i := 0; i+1 < len(g.P50s) && i+1 < len(b.P50s) && i+1 < len(f.P50s); i += 2 {
		perRound = append(perRound, (g.P50s[i]+g.P50s[i+1])/2/of((b.P50s[i]+b.P50s[i+1])/2, (f.P50s[i]+f.P50s[i+1])/2))
	}
	budget = of(b.P50, f.P50)
	return g.P50, budget, g.P50 / budget, perRound, true
}

// growthRow is one growth case: the medians of its per-message times on
// each size and of its paired ratio, and benchstat's spread of the ratio.
type growthRow struct {
	name          string
	k1, m1, ratio float64
	spread        string // "± 12%", from benchstat's 1m/1k table
}

func growthRows(r *Results) []growthRow {
	if r.Growth == nil {
		return nil
	}
	var rows []growthRow
	for name, units := range r.Growth.Medians {
		c, ok := strings.CutPrefix(name, "Growth/")
		if !ok {
			continue
		}
		rows = append(rows, growthRow{name: c, k1: units["ns/op-1k"], m1: units["ns/op-1m"], ratio: units["1m/1k"],
			spread: benchstatSpread(r.Growth.Benchstat, "1m/1k", "Growth/"+c+"-")})
	}
	rank := func(g growthRow) int { // as bench/growth runs them; unknown cases last
		if i := slices.Index(growthCases, g.name); i >= 0 {
			return i
		}
		return len(growthCases)
	}
	slices.SortFunc(rows, func(a, b growthRow) int { return rank(a) - rank(b) })
	return rows
}

// growthCases are bench/growth's case names in the order it runs them.
var growthCases = []string{
	"store=redis/keys=rand", "store=postgres/keys=seq", "store=postgres/keys=rand",
	"store=sqlite/keys=seq", "store=sqlite/keys=rand",
}

// benchstatSpread returns the "± N%" of the row starting with prefix in the
// benchstat table whose header names unit, or "".
func benchstatSpread(out, unit, prefix string) string {
	for _, block := range strings.Split(out, "\n\n") {
		lines := strings.Split(block, "\n")
		if len(lines) < 3 || !strings.Contains(lines[1], unit) {
			continue
		}
		for _, l := range lines[2:] {
			if !strings.HasPrefix(strings.TrimSpace(l), prefix) {
				continue
			}
			if i := strings.Index(l, "±"); i >= 0 {
				if f := strings.Fields(l[i:]); len(f) >= 2 {
					return "± " + f[1]
				}
			}
		}
	}
	return ""
}

// memoryRatio returns RSS after all messages over RSS after a fifth of them.
func memoryRatio(m MemoryRun) (fifth, last MemorySample, ratio float64, ok bool) {
	if len(m.Samples) < 2 {
		return fifth, last, 0, false
	}
	last = m.Samples[len(m.Samples)-1]
	for _, s := range m.Samples {
		if s.Completed >= last.Completed/5 {
			fifth = s
			break
		}
	}
	if fifth.RSSBytes == 0 {
		return fifth, last, 0, false
	}
	return fifth, last, float64(last.RSSBytes) / float64(fifth.RSSBytes), true
}

func label(backend string) string { return stores.Kind(backend).Label() }

func us(v float64) string {
	switch {
	case v >= 10_000:
		return fmt.Sprintf("%.1f ms", v/1000)
	case v >= 1000:
		return fmt.Sprintf("%.2f ms", v/1000)
	}
	return fmt.Sprintf("%.0f µs", v)
}

func ns(v float64) string { return us(v / 1000) }

// plural returns "n word" or "n words".
func plural(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func pct(ratio float64) string { return fmt.Sprintf("%+.0f%%", (ratio-1)*100) }

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return strings.ReplaceAll(s, "`", "'")
}
