// Package pathcost counts what the push path costs each backend, as exact
// counts rather than times: calls on the gate's backend port and store round
// trips (SQL statements and transaction verbs, Redis commands, Datastore RPCs,
// and, on one warm connection, request–response exchanges on the wire) per
// fresh message, per duplicate, and per repeated duplicate on an instance with
// the terminal cache; and what 64 concurrent deliveries of one key cost.
//
// The counts are tests (go test ./bench/pathcost/), run with the normal test
// suite: each backend's figures are pinned, so a change that adds a round trip
// to the hot path fails them. The floors the figures are compared with are
// FloorFresh, FloorDuplicate and FloorCachedDuplicate.
//
// When ONCEGATE_BENCH_REPORT names a file, the tests also write every figure
// they measured there as JSON (a Report), which scripts/bench renders into
// docs/BENCHMARKS.md.
package pathcost
