// Package fencedsink keys a SQL sink by fencing token, so a lock holder whose
// lease lapsed (paused by GC, a frozen VM or a partition) cannot overwrite the
// work of the holder that took the lock over.
//
// A distributed lock alone cannot stop a paused holder: it wakes up believing
// it still holds the lock. Its token can. Every lock acquisition (dlock.Lock.Token,
// gate.Claim.Fence) gets a token above all earlier ones for the key; the sink
// remembers, per key, the highest token that wrote, and refuses any lower one.
//
// # The SQL pattern
//
// The sink table (the user's own, or a dedicated one beside the data, as
// Sink.CreateTable makes) has a unique key column and a BIGINT fence column. A
// holder's writes under one token form a term:
//
//	-- First write of the term: take it. The stored fence must be LOWER than
//	-- the token (a missing row counts as 0).
//	INSERT INTO fences AS cur (key, fence) VALUES ($1, $2)
//	ON CONFLICT (key) DO UPDATE SET fence = excluded.fence
//	WHERE cur.fence < excluded.fence;
//
//	-- Every later write of the term: hold it. The stored fence must be AT MOST
//	-- the token.
//	INSERT INTO fences AS cur (key, fence) VALUES ($1, $2)
//	ON CONFLICT (key) DO UPDATE SET fence = excluded.fence
//	WHERE cur.fence <= excluded.fence;
//
// Run the guard first, in the same transaction as the data writes, and commit.
// Zero rows affected ends the term: roll back, stop writing under this token
// (ErrStaleToken), and acquire the lock again for a newer one. A lower token is
// always refused. Where a row of the user's table always exists, one statement
// does both, checked with Affected:
//
//	UPDATE accounts SET balance = $1, fence = $2 WHERE id = $3 AND fence <= $2;
//
// Why it holds under concurrency: the guard locks the key's row until the
// transaction ends, so a newer holder's guard waits for the older holder's
// commit and then sees its fence, and an older holder's guard after a newer
// one's commit sees the newer fence and is refused. In PostgreSQL's READ
// COMMITTED, an UPDATE that waited for a concurrent writer re-checks its WHERE
// clause against the row that writer committed (PostgreSQL documentation,
// "Transaction Isolation", Read Committed Isolation Level); at REPEATABLE READ
// and above it fails with a serialization error instead, which is also safe.
// SQLite serializes writers. MySQL is not supported: its affected-rows count
// leaves out matched rows that did not change unless the client sets
// CLIENT_FOUND_ROWS.
//
// Sink runs the guards (Take, Hold) and reads a key's fence (Fence, for the
// recovery procedure in package dlock's doc). Term tracks one holder's term and
// ends it at the first refusal; Term.Write wraps guard, data writes and commit
// in one transaction. Statements use PostgreSQL ($1) or SQLite (?1)
// placeholders, per Options.Dialect.
package fencedsink
