// Package stores opens each backend the benchmarks compare — memory, SQLite,
// PostgreSQL, MariaDB/MySQL, Redis and the Datastore fake — the way a worker
// would (the same drivers and clients, the same sqlgate, redisgate and
// datastoregate stores), with round-trip counters attached below the store:
// database/sql statements (roundtrip.Connector), go-redis commands
// (roundtrip.Hook), Datastore RPCs (the fake's own counters) and, on request,
// request–response exchanges on every network connection (roundtrip.Dial).
//
// It also gives each store a one-round-trip probe (PING, SELECT 1, a Lookup of an
// absent key), the unit the overhead target is stated in.
package stores
