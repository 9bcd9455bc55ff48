// Package datastoregate is a gate.Backend on Firestore in Datastore mode (or
// legacy Cloud Datastore) through cloud.google.com/go/datastore. It implements
// gate.Admin (the whole port) with the semantics of memgate, the reference
// backend. Construct it with New on a configured
// *datastore.Client (which picks the project and the database) or with Open.
//
// # Records
//
// Each record is one entity of Options.Kind (default DefaultKind) in
// Options.Namespace, keyed by name: the record key as given when it is valid
// UTF-8, has no NUL byte and is at most 1,500 bytes, else its hashed form (see
// gate.StoreKey; a name of Datastore's reserved form __*__ is hashed too). Its
// properties are docs/design.md's record fields: key (the original key), state,
// fence, lease_expiry, expires_at, done_at, claim_token, owner, fingerprint and
// result. Times are timestamps, stored to the microsecond. Only state and
// expires_at are indexed; the rest, including result and fingerprint, are
// excluded from indexes. An unknown record has no expires_at.
//
// # Transactions and round trips
//
// Every write but a claim is one read-write transaction that begins lazily
// with its read (the client's datastore.BeginLater option): the Lookup carries
// new_transaction read options and returns the transaction id, so a complete,
// release or renew costs two RPCs, Lookup then Commit, or Lookup then Rollback
// when nothing is written (a stale answer). Inspect is one Lookup.
//
// A claim first looks the record up outside a transaction (a lookup by key is
// strongly consistent). A record that refuses the claim (done, failed, unknown,
// held by another, or the caller's own claim re-affirmed by token) is the
// answer: one RPC. An absent record is created with a non-transactional insert
// mutation, which applies only if the entity still does not exist: two RPCs, as
// in a transaction; an insert that lost the race (ALREADY_EXISTS) looks the
// record up again, three RPCs for that refusal. Only a claim that takes over a
// record (expired, or a lapsed lease) runs the transaction, two RPCs more.
//
// # Retries and lost commits
//
// A commit that aborts (codes.Aborted: contention with another transaction on
// the record) did not apply; the whole transaction is retried, up to
// Options.MaxAttempts attempts with jittered exponential backoff
// (Options.RetryBackoff), and then reported as an error, which the gate turns
// into a store-unavailable answer (nack). An abort is never read as a won claim,
// and a retry repeats only the read and the decision, nothing outside the
// transaction.
//
// A commit that fails any other way may have applied with its answer lost (the
// client library even retries a Commit that failed with codes.Unavailable, and
// the service answers the retry of a committed transaction with
// codes.InvalidArgument). Such a commit is retried as well (a claim's
// non-transactional insert whose answer is lost goes to the transaction, which
// finds the record with the caller's token), and a retry that reads
// back exactly the record the lost commit wrote returns that commit's answer: a
// claim finds its own random claim token and re-affirms its claim, fence
// unchanged, instead of locking itself out or bumping the fence twice; a complete
// finds its own done record and reports true. If the context ends first, its
// error is returned; a claim that applied then stays held until its lease
// lapses.
//
// # Clock
//
// Datastore offers no server clock a transaction can read, so every decision
// that involves time (lease live or lapsed, record expired) uses the calling
// instance's clock (Options.Now, default time.Now). (The API's LookupResponse
// read_time and CommitResponse commit_time are server times, but
// cloud.google.com/go/datastore does not pass them on.) Clock skew between
// instances would shift leases by the skew, so a claim takes over a claimed
// record only once its lease is Options.MaxClockSkew past on the claimant's
// clock (gateenv: ONCEGATE_DATASTORE_MAX_CLOCK_SKEW, default 1 s): an instance
// ahead of the holder by at most that never takes a live claim, and a crashed
// holder's key stays blocked that much longer. A holder whose clock runs behind
// sees its own lease end late, so keep the work deadline shorter than the lease
// by more than the skew too. Cloud Run instances are synchronised by Google's
// time service, typically to well under a second.
//
// # Expiry and the TTL policy
//
// Expiry is judged at read time: a record past expires_at is treated as absent
// (its fence carries on into the next claim). A TTL policy on the kind's
// expires_at property deletes expired records for storage, lagging by up to
// about a day (source: "Manage data retention with TTL policies", Firestore in
// Datastore mode documentation); nothing depends on it. Without a TTL policy,
// Purge deletes expired records: it queries expires_at through its
// single-property index and deletes in transactions that re-check each record,
// so a record reclaimed meanwhile survives. ListUnresolved queries state =
// unknown and sorts client-side, so neither needs a composite index.
//
// # Testing against the emulator
//
// The package's tests run the gatetest contract suite twice: on internal/dsfake,
// an in-process fake of the Datastore gRPC API (TestConformance/fake/...), and on
// Google's Datastore emulator, once in its legacy Datastore mode
// (TestConformance/emulator/...) and once in its Firestore in Datastore mode
// (TestConformance/emulator-firestore-mode/...), each started by internal/testenv
// once per test binary. Without the emulator installed the
// emulator runs skip, or fail under CI=true. Each backend the suite makes lives in a
// fresh namespace, so runs do not interfere and need no cleanup. The fake remains
// for what no emulator does on demand: aborted commits, lost commit answers,
// injected latency and RPC counts (faults_test.go). The Firestore emulator in
// Datastore mode aborts every transaction begun by a lookup, so it cannot run
// this package (TestFirestoreEmulatorAbortsBeginLater).
package datastoregate
