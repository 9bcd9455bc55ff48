// Package dsfake is an in-process fake of the Cloud Datastore v1 gRPC API
// (google.datastore.v1.Datastore, as served by Firestore in Datastore mode) for
// tests. The real client library, cloud.google.com/go/datastore, talks to it over
// a loopback gRPC connection, either through Server.NewClient or by setting
// DATASTORE_EMULATOR_HOST to Server.Addr (so processes started by a test can use
// it too).
//
// What it implements:
//
//   - Lookup, RunQuery, BeginTransaction, Commit, Rollback, AllocateIds and
//     ReserveIds, with project, database and namespace partitions kept apart.
//   - Transactions, including the client's begin-later option (a Lookup or
//     RunQuery with new_transaction read options begins the transaction and returns
//     its id). Commits are serializable by optimistic validation: a transactional
//     commit aborts with codes.Aborted when an entity the transaction read has
//     been written since it was read; a blind write (of an entity it never read)
//     commits after whatever was committed meanwhile. A transaction is finished by
//     its commit or abort; reusing it answers codes.InvalidArgument "The referenced
//     transaction has expired or is no longer valid.", as the real service does.
//   - Kind queries (or kindless ones) with property and key filters (=, <, <=, >,
//     >=, !=, IN, NOT_IN, HAS_ANCESTOR; AND and OR), orders, keys-only
//     projection, offset, limit and cursors. Properties excluded from indexes, and
//     entities lacking a filtered or ordered property, do not match, as in the
//     real service. Values of different types compare by Firestore's type order.
//   - Limits the real service enforces that tests should trip over: key names and
//     indexed string or blob values of at most 1,500 bytes, reserved names of the
//     form __*__, and entities of at most 1 MiB (source: "Limits", Firestore in
//     Datastore mode documentation). Timestamps are stored to the microsecond,
//     as the service stores them.
//
// What it does not: GQL, aggregation and projection queries other than keys-only,
// property transforms and masks, read_time reads, composite-index checks (a query
// the real service would reject for lack of an index runs here), and phantom
// detection for queries inside transactions.
//
// # Checked against Google's Datastore emulator
//
// TestFakeMatchesEmulator runs one scripted sequence of the calls datastoregate
// makes (lookups of present and missing entities, begin-later, read-only and
// rolled-back transactions, a read conflict, a blind write racing a commit, reuse
// of a committed transaction, expires_at range queries with order and limit, a
// state query, a filter on an unindexed property, deletes, key and value limits)
// on the fake and on the Datastore emulator (Cloud SDK 528, started by
// internal/testenv), in its legacy Datastore mode and in its Firestore in Datastore
// mode, and wants the same answer at every step. Differences found, and
// what became of them:
//
//   - A transaction that writes an entity it never read, after another commit
//     wrote it, aborted here and commits on the emulator (last writer wins,
//     serialized after the other commit), as Firestore in Datastore mode's
//     optimistic and pessimistic concurrency modes do; aborting was legacy Cloud
//     Datastore's entity-group behaviour (ConcurrencyMode, Firestore Admin API v1
//     reference). Fixed: the fake now commits it.
//
// The emulator itself differs from production in ways the fake does not copy: it
// answers every commit instantly and never aborts a transaction on its own
// (production aborts under lock contention), which is why the fault injection
// below stays.
//
// Fault injection (AbortCommits, DropCommitResponses, FailNext, SetLatency) and
// per-method RPC counters (Count, Counts, ResetCounts) let tests provoke and
// measure what the real service does only under load.
package dsfake
