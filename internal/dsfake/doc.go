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
//     been written since it was read, or when an entity it writes without reading
//     has been written since the transaction began. A transaction is finished by
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
// Fault injection (AbortCommits, DropCommitResponses, FailNext, SetLatency) and
// per-method RPC counters (Count, Counts, ResetCounts) let tests provoke and
// measure what the real service does only under load.
package dsfake
