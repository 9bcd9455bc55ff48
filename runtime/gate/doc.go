// Package gate is oncegate's runtime core: it runs a side effect at most once per
// idempotency key on top of an at-least-once delivery such as a Pub/Sub push
// subscription.
//
// A Gate holds a Backend (the store of records: memgate, sqlgate, redisgate,
// datastoregate, or a third-party one that passes gatetest's contract suite) and
// offers two verbs:
//
//   - Lock de-duplicates: claim → run → complete. A later message on the key is a
//     duplicate (ErrDuplicate); a live holder elsewhere is ErrInProgress.
//   - Mutex serializes: claim → run → release, never complete. Every message runs,
//     one at a time per key.
//
// Every record carries a fencing token (Claim.Fence). It is 1 on a fresh record and
// grows by one on every reclaim and every release; it never decreases. Downstream
// writes should carry it so a stalled holder ("zombie") whose lease was reclaimed
// cannot overwrite the newer holder's work (see docs/design.md, "keying the sink").
//
// Expiry is judged lazily by the backend at read time, on the store's clock where
// the store has one; no sweeper is needed for correctness.
//
// Errors are matched with errors.Is against the sentinels in errors.go; the record
// behind a duplicate or in-progress answer is available through errors.As with a
// *RecordError. OutcomeOf maps any error a verb returns onto the ack policy that
// the push adapters apply.
package gate
