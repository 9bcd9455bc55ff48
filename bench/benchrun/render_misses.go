package main

import (
	"fmt"
	"slices"
	"strings"
)

// renderMisses explains each missed target: by how much, why, and what would
// close it. The figures come from this run; the reasons are the structural
// ones the counts and the profile show.
func renderMisses(d *doc, r *Results) {
	d.p("### Where a target is missed: by how much, why, what would close it")
	d.p("")
	n := 0
	n += missOverhead(d, r)
	n += missTrips(d, r)
	n += missContention(d, r)
	n += missGrowth(d, r)
	n += missMemory(d, r)
	if n == 0 {
		d.p("Every target was met in this run.")
		d.p("")
	}
	renderProfile(d, r)
}

func missOverhead(d *doc, r *Results) int {
	row := overheadRow(r, "redis", overheadC)
	g, budget, ratio, _, ok := row.budget()
	if !ok || ratio <= 1 {
		return 0
	}
	bare, floor, gated, _ := row.runs()
	d.p("**Overhead on Redis at concurrency %d: missed by %s.** Gated p50 %s against a budget of %s (%.2f × bare %s + %s for the two PINGs). The budget prices the store at two PINGs and the gateway at a quarter of a handler that does nothing; both are above that:",
		overheadC, pct(ratio), us(g), us(budget), overheadFactor, us(bare.P50), us(floor.P50-bare.P50))
	d.p("")
	if s := r.RedisScripts; s != nil && s.EvalshaCalls > 0 {
		d.p("- *The store work is heavier than a PING.* The round-trip count is at the floor (2 per fresh message, 1 per duplicate: see Round trips), but the claim is a MULTI/EXEC of three commands and the complete a Lua script that reads and rewrites the record string with its expiry: %.1f µs of Redis's time per EVALSHA against %.2f µs per PING (the section Redis backend above counts the instructions of both). Redis runs one command at a time, so at concurrency %d the requests also wait for each other's.",
			s.EvalshaUsecPerCall, s.PingUsecPerCall, overheadC)
	}
	if mb, _, mg, ok := overheadRow(r, "memory", overheadC).runs(); ok {
		d.p("- *The gateway's own CPU.* On the memory backend (no store I/O) the worker spends %s of CPU per gated delivery against %s per bare one (+%s); on Redis %s against %s for the floor (+%s, the client's two store calls included). On 2 cores shared by the worker, the load generator, Redis and other jobs (load average above), CPU time per request is what requests queue for: bare %0.f req/s against gated %.0f req/s on Redis. The profile at the end of this section shows the gateway's share: the gate itself (claim token, the body's context with its deadline and cause, the store context after the body), the log line, OpenTelemetry attribute sets built even when the providers are no-ops, and the garbage all of that makes.",
			us(mg.CPUPerRequest()), us(mb.CPUPerRequest()), us(mg.CPUPerRequest()-mb.CPUPerRequest()),
			us(gated.CPUPerRequest()), us(floor.CPUPerRequest()), us(gated.CPUPerRequest()-floor.CPUPerRequest()),
			bare.RPS(), gated.RPS())
	}
	if g1, b1, r1, _, ok := overheadRow(r, "redis", 1).budget(); ok {
		d.p("- At concurrency 1, where nothing queues, gated p50 is %s against a budget of %s (%.2f×).", us(g1), us(b1), r1)
	}
	d.p("- *What would close it:* less CPU per delivery in the gateway. Candidates, from the profile and the code: the push guard's per-delivery `slog.Logger.With` (the JSON handler pre-formats those attributes for every request; passing them to the one log call instead costs less), the log call itself (slog records the caller's PC with `runtime.Callers`), OpenTelemetry attribute sets built even when the providers are no-ops (build them only when a real meter or tracer is installed), and the body's three derived contexts (WithoutCancel, WithCancelCause, WithTimeout), which could be one. Logging `ran` and `duplicate` at debug level, or sampled, removes the largest item for the common outcomes. The two round trips cannot go (the body runs between the claim and the complete), and each is already one round trip; a quieter machine with a core for Redis removes most of the queueing. A handler that does real work (a downstream call of a few milliseconds) pays the same absolute overhead as a much smaller fraction.")
	d.p("")
	return 1
}

func missTrips(d *doc, r *Results) int {
	if r.Paths == nil {
		return 0
	}
	n := 0
	for _, c := range r.Paths.Report.Costs {
		fresh, dup := floorTrips(c.Backend)
		if c.FreshTrips <= fresh && c.DupTrips <= dup {
			continue
		}
		n++
		d.p("**Round trips, %s: fresh %d (floor %d), duplicate %d (floor %d).** %s", label(c.Backend), c.FreshTrips, fresh, c.DupTrips, dup, tripsWhy(c.Backend))
		d.p("")
	}
	return n
}

// tripsWhy explains a backend's round trips above the floor and the fix.
func tripsWhy(backend string) string {
	switch backend {
	case "sqlite":
		return "A claim is one `INSERT … ON CONFLICT DO UPDATE … WHERE <claimable> RETURNING`; when the WHERE refuses (the record is done, held, failed or unknown) it returns no row, so a second statement, a SELECT, reads the record to say why. Fresh messages are at the floor; every duplicate and every refused claim pays the SELECT, a call into the embedded engine, not a network trip. SQLite's RETURNING reports no unchanged row and it has no data-modifying WITH (PostgreSQL's one-statement answer): one statement would have to rewrite the refused row to return it, a write and a WAL sync per duplicate."
	case "postgres":
		return "A claim is one statement, won or refused (`WITH c AS (INSERT … ON CONFLICT DO UPDATE … WHERE <claimable> RETURNING …) SELECT … FROM c UNION ALL SELECT … FROM t WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM c)`); only a claim that lost the race to create the record, which its statement's snapshot cannot see, adds a SELECT."
	case "mysql":
		return "MySQL and MariaDB have no conditional upsert that returns the row. A fresh key is one INSERT (the server clock rides back in LAST_INSERT_ID), at the floor; a duplicate is the INSERT's duplicate-key error, then a SELECT. *What would close it:* read first for keys likely to exist (a redelivery carries `deliveryAttempt` > 1: try the SELECT first and INSERT only when the key is absent), or a stored procedure that does INSERT-or-SELECT in one `CALL`, one round trip either way."
	case "datastore":
		return "A claim is a Lookup outside a transaction (a refusal is that one RPC, a duplicate at the floor) and, for an absent key, a non-transactional `insert` mutation (2 RPCs); the complete is a read-write transaction, a Lookup that begins it (begin-later) and a Commit: 4 RPCs per fresh message. *What would close it:* the complete needs its fence check: a transaction, or a non-transactional update guarded by the entity's version (Datastore v1 `Mutation.base_version`, which the Go client library does not expose) for 1 RPC, 3 per fresh message."
	}
	return "See the detail column."
}

func missContention(d *doc, r *Results) int {
	if r.Paths == nil {
		return 0
	}
	var sameAsDup []string
	n := 0
	for _, c := range r.Paths.Report.Contention {
		if c.Bodies == 1 && c.RefusedCallsMax <= 1 && c.RefusedTripsMax <= 1 {
			continue
		}
		n++
		switch {
		case c.Bodies != 1 || c.RefusedCallsMax > 1:
			d.p("**Contention, %s: %d bodies ran, refused deliveries made up to %d port calls.** The gateway let more than one through or called the store more than once for a refused delivery: a bug, not a cost.", label(c.Backend), c.Bodies, c.RefusedCallsMax)
			d.p("")
		case c.Backend == "datastore":
			d.p("**Contention, %s: %s round trips per refused delivery (target 1).** Every refused delivery made one claim and never waited for the holder. One that arrived after the winner's insert costs one Lookup; one that found the key absent at the same moment as the winner has its insert refused (ALREADY_EXISTS) and looks the record up again inside the same claim call: Lookup, Commit, Lookup (3).",
				label(c.Backend), tripRange(c.RefusedTripsMin, c.RefusedTripsMax))
			d.p("")
		default:
			sameAsDup = append(sameAsDup, fmt.Sprintf("%s %s", label(c.Backend), tripRange(c.RefusedTripsMin, c.RefusedTripsMax)))
		}
	}
	if len(sameAsDup) > 0 {
		d.p("**Contention, round trips per refused delivery (target 1): %s.** Every refused delivery made one claim and none waited for the holder's body; the claim costs what a duplicate's does, for the reason given under round trips above (a refused statement, then the SELECT that says why), and the same change would bring it to one.", strings.Join(sameAsDup, ", "))
		d.p("")
	}
	return n
}

func missGrowth(d *doc, r *Results) int {
	n := 0
	for _, g := range growthRows(r) {
		if g.ratio < growthLimit {
			continue
		}
		n++
		msg := fmt.Sprintf("**Growth, %s: 1m/1k = %.2f (%s over the runs), %s over the limit %.1f.**", g.name, g.ratio, g.spread, pct(g.ratio/growthLimit), growthLimit)
		msg += " " + growthWhy(g.name, r)
		d.p("%s", msg)
		d.p("")
	}
	return n
}

// growthWhy explains a growth case's ratio and what would close it.
func growthWhy(name string, r *Results) string {
	switch {
	case strings.HasPrefix(name, "store=sqlite/keys=rand"):
		return fmt.Sprintf("Random keys land on a different leaf of the key index each time. At a million records that index (tens of MB, in a file of hundreds) does not fit SQLite's page cache, which modernc.org/sqlite leaves at SQLite's 2 MB default, and every commit appends each changed page to the WAL, which each checkpoint copies back to scattered places in a large file instead of to the same few pages of a small one. With message-id keys the ratio is %.2f. *What would close it:* message-id keys (or keys with a time prefix); a larger `cache_size` (a DSN parameter, `sqlite:/path?_pragma=cache_size(-65536)`); and, in sqlgate's schema, a `WITHOUT ROWID` table, so a record lives in its key's B-tree instead of an index entry plus a table row: one tree, and fewer pages, written per commit.", ratioOf(r, "store=sqlite/keys=seq"))
	case strings.HasPrefix(name, "store=postgres/keys=rand"):
		return "Random keys put each insert on another leaf of the primary-key index; at a million rows those leaves are rarely in shared_buffers (128 MB here), and the first change to each page after a checkpoint writes the whole page to the WAL. The complete is not a HOT update either: it changes expires_at, which the Purge index covers, so it adds a second entry to the primary-key index. *What would close it:* message-id keys (see keys=seq), a larger shared_buffers, and on PostgreSQL 16 or later a BRIN index on expires_at instead of the B-tree (a summarizing index does not prevent HOT updates), so the complete rewrites the row in place."
	case strings.HasPrefix(name, "store=postgres/keys=seq"), strings.HasPrefix(name, "store=sqlite/keys=seq"):
		return "Growing keys land on the right-most leaf of the key index, which stays cached; the B-tree is one level deeper at a million rows, one more page per lookup. A ratio above the limit here is more likely the machine's noise than the table: compare the spread."
	case strings.HasPrefix(name, "store=redis"):
		return "A Redis database is one hash table; a lookup costs the same at any size, apart from cache misses on a larger table. A ratio above the limit here is the shared machine's noise, not growth: compare the spread."
	}
	return ""
}

// ratioOf returns a growth case's ratio, or 0 when it did not run.
func ratioOf(r *Results, name string) float64 {
	rows := growthRows(r)
	if i := slices.IndexFunc(rows, func(g growthRow) bool { return g.name == name }); i >= 0 {
		return rows[i].ratio
	}
	return 0
}

func missMemory(d *doc, r *Results) int {
	n := 0
	for _, m := range r.Memory {
		fifth, last, ratio, ok := memoryRatio(m)
		if !ok || ratio <= memoryLimit || strings.Contains(m.Name, "no purge") {
			continue
		}
		n++
		d.p("**Worker memory, %s: %s after %d messages against %s after %d (%.2f×).** With a %s ttl and purge every %s the memory backend holds about a few seconds of messages; growth beyond that is the Go heap's own slack (it may grow to twice the live heap before a collection) or the terminal cache filling up to CacheSize (%d keys). *What would close it:* a lower GOGC or a GOMEMLIMIT for the worker.",
			m.Name, mib(last.RSSBytes), last.Completed, mib(fifth.RSSBytes), fifth.Completed, ratio, memoryTTL, memoryPurge, memoryCache)
		d.p("")
	}
	return n
}
