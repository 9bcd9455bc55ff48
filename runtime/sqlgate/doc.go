// Package sqlgate is a gate.Backend over database/sql for PostgreSQL (through
// pgx's stdlib driver), MySQL and MariaDB (through go-sql-driver/mysql) and SQLite
// (through modernc.org/sqlite, pure Go, no cgo: the embedded default for a single
// host and for the local demo).
//
// A Store keeps one row per key in one table (default "oncegate_records"; see DDL
// for the columns). It implements gate.Admin (the whole port), with the
// semantics of memgate, the reference backend:
//
//   - Time comes from the database server, read at statement time (PostgreSQL
//     clock_timestamp(), not the transaction-start now(); MySQL/MariaDB
//     UTC_TIMESTAMP(6); SQLite julianday('now')), and is stored as UTC epoch
//     milliseconds in integer columns. Nothing depends on a session's time zone,
//     and durations are rounded up to whole milliseconds.
//   - A claim is one statement on PostgreSQL, won or refused: a data-modifying
//     WITH runs the upsert (INSERT … ON CONFLICT DO UPDATE … WHERE <claimable>
//     RETURNING) and, when it refused, reads the record that tells the caller
//     why; only a claim that lost a race to create the record, which its
//     statement's snapshot cannot see, adds one SELECT. On SQLite a claim is the
//     upsert, followed by one SELECT only when it was refused (SQLite's
//     RETURNING reports no unchanged row and it has no data-modifying WITH; the
//     SELECT is a call into the embedded engine). MySQL/MariaDB have no
//     conditional upsert with RETURNING: a fresh key is one INSERT (the server
//     clock comes back through LAST_INSERT_ID), a refused claim adds one SELECT
//     (on MariaDB 10.5 and later the INSERT itself returns the stored record, so
//     a refused claim is that one statement), and a reclaim of a lapsed or
//     expired record is a short transaction (SELECT … FOR UPDATE, the clock read
//     after the row lock is held, UPDATE). A lost race
//     never surfaces as a duplicate-key, deadlock or serialization error: the
//     attempt is rolled back and run again inside the call, and the loser answers
//     HeldByOther or AlreadyDone. PostgreSQL sessions at REPEATABLE READ or
//     SERIALIZABLE are handled the same way.
//   - Statements run prepared, once per pooled connection.
//   - Keys are stored in the form gate.StoreKey(key, 512) gives, so a key of any
//     length or content (10 KB, NUL bytes, invalid UTF-8) fits the indexed key
//     column; the caller's key is kept in raw_key when it was hashed, so
//     ListUnresolved reports it.
//   - Purge deletes expired records in batches (SQL has no TTL policy); it never
//     deletes a live claim or an unknown record.
//
// Construct a Store with New over a *sql.DB the caller configured, or with Open
// from a DSN whose scheme picks the driver (postgres://, postgresql://, mysql://,
// sqlite:), as docs/design.md's configuration contract ONCEGATE_SQL_DSN says. Create the
// table with CreateSchema, or run the statements DDL returns in your own
// migrations.
//
// When the side effect is a write to the same database, RunTx and InTx put the
// claim, the writes and the done record in one transaction, so they commit or
// roll back together (exactly once); an external call stays with gate.Lock.
// LockTx, TryLockTx and RunLocked serialize work for the life of one
// transaction. docs/transactions.md says which mode fits which effect.
package sqlgate
