package main

import (
	"fmt"
	"strings"

	"github.com/oncegate/oncegate/bench/pathcost"
)

func renderSummary(d *doc, r *Results) {
	d.section("Targets", true)
	d.table("target", "measured", "verdict")
	if g, budget, ratio, rounds, ok := overheadRow(r, "redis", overheadC).budget(); ok {
		verdict := "met"
		if ratio > 1 {
			verdict = fmt.Sprintf("**missed by %s** (%.2f× the budget)", pct(ratio), ratio)
		}
		var per []string
		for _, x := range rounds {
			per = append(per, fmt.Sprintf("%.2f", x))
		}
		d.p("| Overhead on Redis, concurrency %d: gated p50 ≤ %.2f × bare p50 + the two store round trips (floor p50 − bare p50) | gated p50 %s, budget %s (gated/budget per round: %s) | %s |",
			overheadC, overheadFactor, us(g), us(budget), strings.Join(per, ", "), verdict)
	} else {
		d.p("| Overhead on Redis | not measured in this run | — |")
	}
	if r.Paths != nil {
		var above []string
		for _, c := range r.Paths.Report.Costs {
			fresh, dup := floorTrips(c.Backend)
			if c.FreshTrips > fresh || c.DupTrips > dup || c.CachedDupTrips > pathcost.FloorCachedDuplicate {
				above = append(above, fmt.Sprintf("%s %d/%d", label(c.Backend), c.FreshTrips, c.DupTrips))
			}
		}
		verdict := "met on every backend"
		if len(above) > 0 {
			verdict = "**above the floor** (fresh/duplicate): " + strings.Join(above, ", ")
		}
		d.p("| Round trips per message at the floor: fresh 2 (claim + complete), duplicate 1, repeated duplicate with the terminal cache 0 | port calls 2 / 1 / 0 on every backend; store round trips in the table below | %s |", verdict)
	}
	for _, g := range growthRows(r) {
		verdict := "met"
		if g.ratio >= growthLimit {
			verdict = fmt.Sprintf("**missed by %s** (limit %.1f)", pct(g.ratio/growthLimit), growthLimit)
		}
		d.p("| Growth %s: 1m/1k < %.1f | %s → %s per message, ratio %s | %s |", g.name, growthLimit, ns(g.k1), ns(g.m1),
			strings.TrimSpace(fmt.Sprintf("%.2f %s", g.ratio, g.spread)), verdict)
	}
	for _, m := range r.Memory {
		if _, _, ratio, ok := memoryRatio(m); ok {
			verdict := "bounded"
			if ratio > memoryLimit {
				verdict = fmt.Sprintf("**grows** (%.2f×)", ratio)
				if strings.Contains(m.Name, "no purge") {
					verdict = fmt.Sprintf("grows (%.2f×), as it must without purge: the control", ratio)
				}
			}
			d.p("| Worker memory, %s: RSS after all %d messages ≤ %.1f × RSS after a fifth | %.2f× | %s |",
				m.Name, r.Config.Messages, memoryLimit, ratio, verdict)
		}
	}
	if r.Paths != nil {
		for _, c := range r.Paths.Report.Contention {
			verdict := "met"
			switch {
			case c.Bodies != 1 || c.RefusedCallsMax > 1:
				verdict = "**missed**: more than one body, or more than one store call per refused delivery"
			case c.RefusedTripsMax > 1:
				verdict = fmt.Sprintf("one store call each, but **%s round trips** each (target 1)", tripRange(c.RefusedTripsMin, c.RefusedTripsMax))
			}
			trips := tripRange(c.RefusedTripsMin, c.RefusedTripsMax) + " round trips"
			if c.RefusedTripsMin == c.RefusedTripsMax {
				trips = plural(c.RefusedTripsMax, "round trip")
			}
			d.p("| Contention, %s: %d deliveries of one key → 1 body, the other %d answered within one store round trip each | %s; %d refused (HTTP %d) after %s and %s each | %s |",
				label(c.Backend), c.Deliveries, c.Deliveries-1, plural(int64(c.Bodies), "body"), c.Refused, c.RefusedStatus,
				plural(c.RefusedCallsMax, "port call"), trips, verdict)
		}
	}
	d.p("")
}

// floorTrips returns the floors in store round trips for a backend: the
// memory backend makes none.
func floorTrips(backend string) (fresh, dup int64) {
	if backend == "memory" {
		return 0, 0
	}
	return pathcost.FloorFresh, pathcost.FloorDuplicate
}

func renderMethod(d *doc, r *Results) {
	m := r.Machine
	d.section("Machine and method", true)
	d.p("- %s, %d cores, %.0f GiB, %s, %s; %s, %s, %s, all on loopback.", m.CPU, m.Cores, m.MemoryGiB, m.Kernel, m.Go, m.Redis, m.Postgres, m.MySQL)
	d.p("- The machine is shared with other jobs: load average %s at the start, %s at the end. Times are noisy; counts are exact.", m.LoadStart, m.LoadEnd)
	d.p("- Overhead: for each backend one `bench/target` process (the worker) and, per run, one `bench/loadgen` process (closed loop, each request a real wrapped push with a message id of its own, 64 B of data). Per backend and concurrency, %d round(s) of bare, floor, gated, gated, floor, bare (%d for Redis at concurrency %d, the row the target is judged on); each run %s after %s of warm-up; p50 and p99 are the mean of the runs' percentiles, req/s is over all measured time, CPU/req is the target's user+system CPU time (getrusage) over the measured windows per request.",
		r.Config.Rounds, max(r.Config.Rounds, r.Config.TargetRounds), overheadC, r.Config.Duration, r.Config.Warmup)
	d.p("  - `bare`: read the body, parse the envelope (`push.ParseRequest`), run the handler function, 204 — the handler without the gateway.")
	d.p("  - `floor`: `bare` plus two minimal store round trips (Redis PING, SQL `SELECT 1`, a Datastore Lookup of an absent key; nothing for memory) — the least a gateway on that store can add.")
	d.p("  - `gated`: `push.NewHandler` over `gate.New(backend)` with defaults: claim, body, complete; its one log line per delivery is formatted as JSON and discarded; OpenTelemetry no-op. SQL and Redis pools hold 16 connections; PostgreSQL commits synchronously (the server's default); the Datastore fake runs inside the target process.")
	d.p("- Commands (from the repository root):")
	d.p("")
	d.p("```")
	d.p("scripts/bench                      # everything below, then writes this section")
	for _, c := range r.Config.Commands {
		d.p("%s", c)
	}
	for _, gb := range []*GoBench{r.Footprint, r.Growth} {
		if gb != nil {
			for _, c := range gb.Commands {
				d.p("%s", c)
			}
		}
	}
	d.p("go build -o target ./bench/target && go build -o loadgen ./bench/loadgen")
	d.p("./target -backend redis -dsn 127.0.0.1:6379 -pprof   # prints {\"addr\": …}")
	d.p("./loadgen -url http://ADDR/gated -c 16 -duration %s -warmup %s -stats http://ADDR/stats", r.Config.Duration, r.Config.Warmup)
	d.p("```")
	d.p("")
}

func renderOverhead(d *doc, r *Results) {
	if !d.section("Overhead: the gateway against the bare handler", len(r.Overhead) > 0) {
		return
	}
	d.p("Budget = %.2f × bare p50 + (floor p50 − bare p50); the target applies to Redis at concurrency %d, the other rows use the same yardstick.", overheadFactor, overheadC)
	d.p("")
	d.table("backend", "c:", "bare req/s:", "bare p50:", "bare p99:", "floor p50:", "gated req/s:", "gated p50:", "gated p99:",
		"gated/bare p50:", "gated/budget:", "CPU/req bare → gated:", "errors:")
	for _, row := range r.Overhead {
		b, f, g, ok := row.runs()
		if !ok {
			continue
		}
		_, _, ratio, _, _ := row.budget()
		d.p("| %s | %d | %.0f | %s | %s | %s | %.0f | %s | %s | %.2f | %.2f | %s → %s | %d |",
			label(row.Backend), row.Concurrency, b.RPS(), us(b.P50), us(b.P99), us(f.P50),
			g.RPS(), us(g.P50), us(g.P99), g.P50/b.P50, ratio, us(b.CPUPerRequest()), us(g.CPUPerRequest()),
			b.Errors+f.Errors+g.Errors)
	}
	d.p("")
	renderOverheadNotes(d, r)
	if s := r.RedisScripts; s != nil && s.EvalshaCalls > 0 {
		d.p("Redis's own time per call over the Redis runs (INFO commandstats, server-wide): EVALSHA (every complete; a claim is a MULTI/EXEC of plain commands) %.1f µs over %d calls, PING (the floor's round trips) %.2f µs over %d calls.",
			s.EvalshaUsecPerCall, s.EvalshaCalls, s.PingUsecPerCall, s.PingCalls)
		d.p("")
	}
}

func renderPaths(d *doc, r *Results) {
	if !d.section("Round trips per message (counted)", r.Paths != nil) {
		return
	}
	d.p("`%s` — exact counts, pinned by the test (it fails when a figure changes). Port calls are calls on `gate.Backend`; round trips are SQL statements and transaction verbs (counted in a `database/sql` driver wrapper), Redis commands (a go-redis hook) and Datastore RPCs (a gRPC interceptor, checked against the fake's own count); on one warm connection the test also counts request–response exchanges on the wire and requires them to equal those round trips. SQLite's are calls into the embedded engine, not network trips.", r.Paths.Command)
	d.p("")
	d.table("backend", "fresh: calls / round trips (floor 2):", "duplicate: calls / round trips (floor 1):",
		"repeated duplicate, CacheSize > 0 (floor 0):", "fresh", "duplicate")
	for _, c := range r.Paths.Report.Costs {
		d.p("| %s | %d / %d | %d / %d | %d / %d | %s | %s |", label(c.Backend), c.FreshCalls, c.FreshTrips,
			c.DupCalls, c.DupTrips, c.CachedDupCalls, c.CachedDupTrips, detail(c.FreshDetail), detail(c.DupDetail))
	}
	d.p("")
}

// detail keeps the store-level names of a count list ("sql_query=1 …").
func detail(s string) string {
	var keep []string
	for _, f := range strings.Fields(s) {
		name, _, _ := strings.Cut(f, "=")
		switch name {
		case "claim", "complete", "claim_refused", "grpc_calls", "redis_commands":
			continue
		}
		keep = append(keep, "`"+f+"`")
	}
	if len(keep) == 0 {
		return "—"
	}
	return strings.Join(keep, " ")
}

// tripRange formats a min–max count, or one number when they agree.
func tripRange(lo, hi int64) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

func renderContention(d *doc, r *Results) {
	if !d.section("Contention: 64 concurrent deliveries of one key", r.Paths != nil) {
		return
	}
	d.p("Same test binary (`TestContention`): 64 deliveries of one message through four gateway instances sharing the store, released together; the body holds the key until the other 63 are answered. Round trips are counted per delivery (each request carries its own counter through its context).")
	d.p("")
	d.table("backend", "bodies:", "refused (HTTP):", "port calls per refused:", "round trips per refused:", "all refused:", "winner:")
	for _, c := range r.Paths.Report.Contention {
		trips := tripRange(c.RefusedTripsMin, c.RefusedTripsMax)
		d.p("| %s | %d | %d (%d) | %d | %s | %d | %d |", label(c.Backend), c.Bodies, c.Refused, c.RefusedStatus,
			c.RefusedCallsMax, trips, c.RefusedTripsTotal, c.WinnerTrips)
	}
	d.p("")
}

// renderOverheadNotes says, per backend at concurrency 1 (where nothing
// queues), what the gated path adds beyond the floor and why.
func renderOverheadNotes(d *doc, r *Results) {
	why := map[string]string{
		"memory":    "no store: this is the gateway's own work (see the profile below)",
		"sqlite":    "two commits, each syncing the WAL to disk (synchronous=FULL, which sqlgate.Open keeps); at higher concurrency writers also queue for SQLite's one write lock in its busy handler, which sleeps in steps of milliseconds — hence the p99s (a one-connection pool would queue them in Go instead)",
		"postgres":  "two commits, each waiting for its WAL flush (synchronous_commit=on, the server's default); the floor's SELECT 1 writes nothing (see \"SQL backend\" for commit=async figures)",
		"mysql":     "two autocommitted writes, each flushing InnoDB's redo log (innodb_flush_log_at_trx_commit=1, the default); the floor's SELECT 1 writes nothing",
		"redis":     "a MULTI/EXEC of three plain commands and a Lua script instead of two PINGs (server time below), plus the gateway's own work",
		"datastore": "four RPCs against the floor's two (see round trips), each into the fake running in the same process, and its transactions",
	}
	var lines []string
	for _, row := range r.Overhead {
		if row.Concurrency != 1 {
			continue
		}
		_, f, g, ok := row.runs()
		if !ok || why[row.Backend] == "" {
			continue
		}
		diff := "gated − floor = " + us(g.P50-f.P50)
		if g.P50 <= f.P50 {
			diff = "no difference this run can resolve (gated p50 " + us(g.P50) + ", floor " + us(f.P50) + ")"
		}
		lines = append(lines, fmt.Sprintf("- %s: %s at concurrency 1: %s.", label(row.Backend), diff, why[row.Backend]))
	}
	if len(lines) == 0 {
		return
	}
	d.p("What the gated path adds beyond the floor, per backend:")
	d.p("")
	for _, l := range lines {
		d.p("%s", l)
	}
	d.p("")
}

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
