// Package growth holds the growth benchmark: what one message's store work (a
// claim then a complete, on a fresh key) costs when the store already holds a
// thousand records and when it holds a million, on Redis, PostgreSQL and SQLite.
// The target is a ratio below 1.3 (see docs/BENCHMARKS.md).
//
// It is a benchmark only, so the normal test run never seeds a million
// records:
//
//	go test -run '^$' -bench Growth -benchtime 2000x -count 10 ./bench/growth/ > growth.txt
//	go tool benchstat growth.txt
//
// The two sizes are measured in pairs, message by message, so the machine's
// noise hits both alike; the 1m/1k metric is the ratio of each run.
//
// Each store is seeded once per test binary, in bulk, with copies of a record
// the store itself wrote (so every column holds what the backend writes): on
// PostgreSQL one INSERT … SELECT over generate_series, on SQLite one INSERT …
// SELECT over a recursive CTE, on Redis a Lua loop in batches of 50,000 keys.
// Seeded keys are hex hashes and each benchmarked key is random, so new keys
// land all over the key index rather than at one end of it. The tables and keys
// are dropped when the binary ends.
package growth
