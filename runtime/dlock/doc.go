// Package dlock is a distributed lock with fencing tokens over any gate.Backend,
// on the same records and stores as the idempotency gateway.
//
// A Client acquires a key for an owner and returns a Lock whose Token is the
// record's fence: 1 on a fresh key, and above every token handed out for the key
// before (each release and each takeover of a lapsed lease raises it by one).
// The lock itself only excludes other holders until its lease lapses; a holder
// that pauses longer (a GC pause, a frozen VM, a partition) may still write
// after a newer holder took over. The token closes that gap: pass it with every
// write the lock guards, and have the sink refuse a token lower than the highest
// it has seen (runtime/fencedsink does this for a SQL table).
//
// Verbs:
//
//   - Acquire (one try; ErrLocked when held) and AcquireWait (retry until ctx).
//   - Lock.Release, or Client.Release by key and owner; each reports whether the
//     lock was still that holder's.
//   - Lock.Renew, or Client.Renew by key and owner: reset the lease, token kept.
//   - Do and Lock.Scope: hold the lock while a function runs, renewing it every
//     RenewInterval, and cancel the function's context with a cause matching
//     gate.ErrLeaseLost the moment a renewal is refused.
//   - Inspect, IsLocked, Owner and TTL: read without changing.
//   - AdvanceFence: raise a key's fence, never lowering it.
//
// Lock records live under the key "<Namespace>:<key>" (default "lock:<key>"), are
// always in state claimed, and are never completed, so they never mix with the
// gateway's done records; a Gate must not share the namespace.
//
// # Clocks
//
// Leases are set and judged by the backend on the store's clock. The queries
// (Inspect, IsLocked, Owner, TTL, and Release and Renew by owner) compare a lease
// expiry with "now": read from the store when the backend is a Clock, else from
// Options.Now (the client's clock, so skew shifts those answers; a holder's
// Token stays correct regardless). Scope measures how long ago a renewal was
// confirmed on this machine's monotonic clock, which skew does not affect.
//
// # Tokens and exhaustion
//
// Tokens stay within gate.MaxFence (2^53−1), the largest integer JSON numbers
// and JavaScript represent exactly. When the next token would pass it, Acquire
// returns an error matching gate.ErrFenceExhausted instead of wrapping around.
//
// # Recovery after the store lost data
//
// If the store loses lock records (a Redis failover without persistence, a
// restored backup, a record deleted after its TTL), the next Acquire starts again
// at a low token, below tokens the sinks have already accepted. A fenced sink
// refuses those writes (ErrStaleToken) — safe, but the key makes no progress. To
// recover:
//
//  1. Find the highest token any sink accepted for the key (with
//     runtime/fencedsink, Sink.Fence reads it from the table).
//  2. Call Client.AdvanceFence(ctx, key, highest). It never lowers a fence, so
//     running it twice or with a stale value is harmless.
//  3. The next Acquire gets a token above every token handed out before the loss.
//     A live holder that acquired after the loss with a lower token is fenced
//     out: its renewals are refused and its Scope is cancelled.
package dlock
