package main

import (
	"fmt"
	"strings"
)

func renderGrowth(d *doc, r *Results) {
	if !d.section("Growth: 1 thousand against 1 million stored records", r.Growth != nil) {
		return
	}
	d.p("One claim plus one complete on a fresh key, straight on the store (`./bench/growth`), on a store of 1k and one of 1m records in pairs, message by message, so that a burst of load from elsewhere hits both alike; each run's 1m/1k is the ratio of its two means, and the table gives the median over the runs with benchstat's spread. `keys=seq` are message-id-like keys that grow (the default key is the Pub/Sub message id), `keys=rand` random keys (UUID-like business keys). PostgreSQL with `synchronous_commit=off` and SQLite with `synchronous=NORMAL`, so the flush to disk, which does not grow with the table, does not dilute the ratio; the 1m tables are seeded in bulk (one INSERT … SELECT; a Lua loop on Redis), then vacuumed and checkpointed.")
	d.p("")
	d.table("case", "per message, 1k:", "per message, 1m:", "1m / 1k:")
	for _, g := range growthRows(r) {
		d.p("| %s | %s | %s | %.2f %s |", g.name, ns(g.k1), ns(g.m1), g.ratio, g.spread)
	}
	d.p("")
	d.p("```")
	d.p("%s", r.Growth.Benchstat)
	d.p("```")
	d.p("")
}

func renderMemory(d *doc, r *Results) {
	d.section("Memory", true)
	if f := r.Footprint; f != nil {
		rec := f.Medians["MemgateRecord"]["bytes/record"]
		ent := f.Medians["GateCacheEntry"]["bytes/record"]
		d.p("Per record (`./bench/footprint`, live heap after GC over 100,000 records, median): the memory backend holds **%.0f B per record** (a done record of a namespaced 16-digit message id, the gate's claim token and owner, no result); the gate's terminal cache holds **%.0f B per cached key**, so `CacheSize` 10,000 costs about %.1f MiB.",
			rec, ent, ent*10_000/(1<<20))
		d.p("")
		d.p("```")
		d.p("%s", f.Benchstat)
		d.p("```")
		d.p("")
	}
	if len(r.Memory) == 0 {
		return
	}
	d.p("Worker resident memory (`bench/target`, lease %s, ttl %s, CacheSize %d) while `bench/loadgen` sends %d distinct messages at concurrency 16, read from `/proc/self/status` every tenth of them:",
		memoryLease, memoryTTL, memoryCache, r.Config.Messages)
	d.p("")
	cols := []string{"run", "req/s:"}
	for _, s := range r.Memory[0].Samples {
		cols = append(cols, fmt.Sprintf("%dk:", s.Completed/1000))
	}
	d.table(append(cols, "records held at the end:", "last / fifth:")...)
	for _, m := range r.Memory {
		var cells []string
		for _, s := range m.Samples {
			cells = append(cells, mib(s.RSSBytes))
		}
		records := "—"
		if n := len(m.Samples); n > 0 && m.Samples[n-1].Records >= 0 {
			records = fmt.Sprint(m.Samples[n-1].Records)
		}
		_, _, ratio, _ := memoryRatio(m)
		d.p("| %s | %.0f | %s | %s | %.2f |", m.Name, m.RPS, strings.Join(cells, " | "), records, ratio)
	}
	d.p("")
}

func renderProfile(d *doc, r *Results) {
	p := r.Profile
	if p == nil {
		return
	}
	d.p("Where the gated path's CPU goes: a %d s CPU profile of `bench/target` on the memory backend (no store I/O) at concurrency %d, the handler's subtree only (`%s`; the percentages are of the whole profile, the HTTP server and the garbage collector's background work included):", p.Seconds, p.Concurrency, p.Command)
	d.p("")
	d.p("<details><summary>pprof -top -cum</summary>")
	d.p("")
	d.p("```")
	d.p("%s", p.Top)
	d.p("```")
	d.p("")
	d.p("</details>")
	d.p("")
}
