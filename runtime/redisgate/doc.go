// Package redisgate is a gate.Backend on Redis (standalone, Sentinel, Cluster, or a
// Memorystore instance) through go-redis v9's redis.UniversalClient. It implements
// gate.Admin (the whole port) with the semantics of memgate, the reference
// backend.
//
// # Records
//
// Each record is one Redis string at Options.Prefix + key (the key byte for byte,
// never hashed: Redis keys are binary-safe), whose TTL is the record's expires_at.
// Its value, format version 1 ("og1"), is a header line and a body:
//
//	og1 <state> <fence> <lease> <done> <token len> <owner len> <fingerprint len>\n
//	<token><owner><fingerprint><result>
//
// state is claimed, done, failed or unknown; fence and the three lengths (bytes)
// are decimal; token, owner, fingerprint and result are raw bytes, result taking
// the rest of the value. lease and done are decimal milliseconds, empty when the
// record has no lease_expiry or done_at (a claim never has done_at): in a record
// with a TTL (every state but unknown) they count back from the key's expiry,
// lease_expiry = expiry - lease and done_at = expiry - done (lease may be
// negative: a completion with a short TTL ends the record before its lease); in an
// unknown record, which has no TTL, they are UTC epoch milliseconds. expires_at is
// not stored: it is the key's expiry (PEXPIRETIME). A finished record (done or
// failed) has no lease: nothing is excluded by a lease once the outcome is
// recorded. The key field is the Redis key less the prefix. Every field stays
// readable: Inspect and `oncegate inspect` decode it, and redis-cli GET shows the
// header as text.
//
// So a claim is one transaction of plain commands, MULTI, SET key value NX GET
// PX, PEXPIRETIME, PTTL, EXEC, sent in one round trip, with no script: on an
// absent key the SET writes the value the client built (fence 1, lease = the
// TTL); on any other it writes nothing and returns the stored record, which the
// client judges on the server's clock (now = PEXPIRETIME - PTTL; a claim's lease
// is live while PTTL exceeds its lease field). MULTI makes the three one instant
// (no other client's command runs between them, and no key expires inside EXEC),
// so the expiry always belongs to the record the SET returned; only the claim
// script takes a lapsed claim over, judging again atomically. A completion is one
// script: a GET, the fence check and a SET PX of the finished
// record. docs/BENCHMARKS.md, "Redis backend", has what each costs the server.
//
// A key that holds a hash is a record in the format before version 1, one hash
// field per record field (state, fence, lease_expiry, expires_at and done_at as
// UTC epoch milliseconds, claim_token, owner, fingerprint, result). Every script
// reads such a record and answers as before; completions, renewals, releases,
// fence advances, marks and resolves write it back as a hash, and the claim that
// starts a new record on the key (over a lapsed or released claim or past its
// expiry) writes version 1. A hash that lacks fields or holds something other
// than a number in them (a partial or foreign write) never makes a script fail: a
// missing or non-numeric lease_expiry counts as lapsed, a missing fence as 0, and
// a hash without a state as no record, so the next claim takes the key over with
// fence + 1 and writes a whole new record. A done, failed or unknown record
// without expires_at stays what it says (treating it as lapsed would run its body
// again). A string that is not a version 1 value, or a key of another type, is an
// error (WRONGTYPE) and is left as it is. Code older than version 1 cannot read a
// version 1 record: its scripts fail with WRONGTYPE on such a key, so its claims
// fail closed; see docs/deploy.md, "Upgrading the Redis record format".
//
// # Atomicity and Cluster
//
// Every operation is one Lua script or, for the claim, one MULTI/EXEC
// transaction, that touches exactly one key, the record's, so it is atomic on a
// single server and routes to one slot in a Cluster. No hash tag
// is added: records spread over every slot, and a prefix may not contain braces,
// which would make it a hash tag and put every record in one slot. Scripts run by
// SHA (EVALSHA) and fall back to EVAL when the server answers NOSCRIPT (after a
// restart, a failover or SCRIPT FLUSH); see redis.Script.Run.
//
// # Clock
//
// Every time is the server's: a record's times count back from its key's expiry,
// which Redis sets from its own clock (SET PX), and a script that needs the time
// reads PTTL, PEXPIRETIME or TIME. The client's clock is never used, so skew
// between instances cannot move a lease. A lease is judged when a script reads the
// record; expiry is Redis's own, which deletes a record at its expires_at (a
// key is never readable past its expiry). In a Cluster each record is judged by
// the clock of the master that owns its slot.
//
// # Expiry
//
// Every script that writes a record also sets the key's expiry to the record's
// expires_at, so no gateway key is ever without a TTL, except an unknown record,
// which is made persistent because it must survive until an operator resolves it. Redis deletes a record at expires_at on its own; a claim after that
// starts a fresh record at fence 1, which docs/design.md's invariant 2 (lease + ttl
// longer than any holder lives) makes safe. A record written with a zero TTL and
// a zero lease is deleted at once.
//
// The key's expiry is part of the record: an og1 record stores its lease and
// done times as milliseconds before that expiry. Never change it from outside
// (EXPIRE, PERSIST, a TTL-rewriting migration tool): shortening it shortens a
// live lease, so a second holder may claim while the first still works (its
// writes are still fenced out), and PERSIST on a live claim makes it claimable
// at once. A copy must carry the expiry over exactly (RESTORE with ABSTTL and
// the source key's PEXPIRETIME).
//
// # Eviction
//
// Every record except an unknown one carries a TTL, so under any volatile-*
// maxmemory-policy (Memorystore's default is volatile-lru) as well as any
// allkeys-* one, Redis may delete a record when memory runs short. A deleted
// record is a duplicate: an evicted done record lets its redelivery run the body
// again, and an evicted live claim lets a second holder in at the same fence, so
// no fenced sink can refuse either. Open (and gateenv, with it) therefore refuses
// to start unless every server's INFO memory reports maxmemory-policy noeviction
// or maxmemory 0; it returns an *EvictionError naming the server and the setting.
// Under noeviction a full server refuses writes (an OOM error): claims fail and
// deliveries are nacked, which is safe, and the memory alert is the operator's
// cue. Options.AllowEviction (ONCEGATE_REDIS_ALLOW_EVICTION=1) skips the check,
// for those who accept duplicates. The check is made at start only; keep the
// policy in the instance's configuration, where a later change is reviewed.
//
// # Scans
//
// Purge deletes nothing and returns 0: Redis has already removed every record
// whose expires_at has passed. ListUnresolved finds unknown records with SCAN over
// the prefix on every master (every shard of a Ring), then reads each match's
// state: its cost grows with the size of each server's keyspace, not with the
// number of unknown records. It is meant for an operator's reconcile run, not for
// the request path. Nothing else scans.
//
// Store also reads the server's clock for lock queries (Now, the dlock.Clock
// capability).
//
// # Retries
//
// The store does not retry; the Gate decides. go-redis itself retries a command
// after a network error (redis.Options.MaxRetries, default 3), which is safe for a
// claim (a retried claim carries the same token and re-affirms itself) but makes a
// completion whose first attempt committed and whose reply was lost report false,
// which the Gate treats as fenced out. go-redis does not retry a transaction whose
// reply was lost once it was sent, so a claim answered by its plain MULTI/EXEC
// then fails instead, and the redelivery waits out the lease it may have taken.
// Set MaxRetries to -1 on the client to leave every retry to the Gate.
//
// Requires Redis 7.0 or later (SET with both NX and GET, and PEXPIRETIME; scripts
// that read the clock before writing rely on effects replication, the default
// since 5.0); tested on Redis 7.0. On Memorystore, use version REDIS_7_0 or later.
package redisgate
