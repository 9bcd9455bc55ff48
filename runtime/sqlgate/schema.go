package sqlgate

import (
	"context"
	"crypto/sha256"
	"fmt"
	"hash/fnv"
)

// DefaultTable is the table a Store uses when Options.Table is empty.
const DefaultTable = "oncegate_records"

// maxIdentBytes is the longest table name accepted: PostgreSQL's identifier limit
// (NAMEDATALEN-1 = 63 bytes; MySQL allows 64).
const maxIdentBytes = 63

// checkIdent reports whether name is a plain identifier: ASCII letters, digits
// and underscores, not starting with a digit, 1 to 63 bytes. Only such names are
// ever spliced into SQL, and always quoted.
func checkIdent(name string) error {
	if name == "" || len(name) > maxIdentBytes {
		return fmt.Errorf("must be 1 to %d bytes (got %d)", maxIdentBytes, len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9':
			if i == 0 {
				return fmt.Errorf("must not start with a digit (got %q)", name)
			}
		default:
			return fmt.Errorf("must hold only letters, digits and underscores (got %q)", name)
		}
	}
	return nil
}

// indexName derives a per-table index name that fits the 63-byte identifier
// limit: PostgreSQL and SQLite index names share one namespace per schema, so
// they carry the table's name, shortened with a hash when too long.
func indexName(table, suffix string) string {
	name := table + "_" + suffix
	if len(name) <= maxIdentBytes {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(table))
	keep := maxIdentBytes - len(suffix) - 10 // "_" + 8 hex + "_"
	return fmt.Sprintf("%s_%08x_%s", table[:keep], h.Sum32(), suffix)
}

// DDL returns the statements that create the Store's table and indexes, each
// idempotent (IF NOT EXISTS), for teams that run their own migrations.
// CreateSchema runs exactly these. The columns (UTC epoch milliseconds in the
// integer time columns) are:
//
//	key           the record's key as gate.StoreKey(key, 512) gives it; primary key,
//	              compared byte for byte (PostgreSQL COLLATE "C", MySQL VARBINARY)
//	raw_key       the caller's key when key holds its hash, else NULL
//	state         claimed | done | failed | unknown
//	fence         the fencing token, 1 … 2^53−1
//	lease_expiry  until when a claimed record excludes other claims
//	done_at       when the record became done or failed, else NULL
//	expires_at    when the record may be deleted; NULL for unknown (never)
//	claim_token   the token of the claim call that last won the record; '' after
//	              a release
//	owner         who holds or last held the record
//	fingerprint   the optional payload hash, else NULL
//	result        the optional stored result, else NULL
//
// plus an index on expires_at (Purge) and one on unknown records by lease_expiry
// (ListUnresolved).
func (s *Store) DDL() []string { return ddl(s.dialect, s.table) }

func ddl(d Dialect, table string) []string {
	t := d.quote(table)
	k := d.quote("key")
	switch d {
	case Postgres:
		return []string{
			`CREATE TABLE IF NOT EXISTS ` + t + ` (
	` + k + ` text COLLATE "C" NOT NULL PRIMARY KEY,
	raw_key bytea,
	state text NOT NULL CHECK (state IN ('claimed', 'done', 'failed', 'unknown')),
	fence bigint NOT NULL,
	lease_expiry bigint NOT NULL,
	done_at bigint,
	expires_at bigint,
	claim_token text NOT NULL,
	owner text NOT NULL,
	fingerprint bytea,
	result bytea
)`,
			`CREATE INDEX IF NOT EXISTS ` + d.quote(indexName(table, "expires_at")) + ` ON ` + t +
				` (expires_at) WHERE expires_at IS NOT NULL`,
			`CREATE INDEX IF NOT EXISTS ` + d.quote(indexName(table, "unknown")) + ` ON ` + t +
				` (lease_expiry, ` + k + `) WHERE state = 'unknown'`,
		}
	case MySQL:
		return []string{
			`CREATE TABLE IF NOT EXISTS ` + t + ` (
	` + k + ` VARBINARY(512) NOT NULL,
	raw_key LONGBLOB NULL,
	state VARCHAR(8) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	fence BIGINT NOT NULL,
	lease_expiry BIGINT NOT NULL,
	done_at BIGINT NULL,
	expires_at BIGINT NULL,
	claim_token VARBINARY(128) NOT NULL,
	owner TEXT CHARACTER SET utf8mb4 NOT NULL,
	fingerprint BLOB NULL,
	result LONGBLOB NULL,
	PRIMARY KEY (` + k + `),
	KEY expires_at_idx (expires_at),
	KEY unknown_idx (state, lease_expiry),
	CONSTRAINT state_check CHECK (state IN ('claimed', 'done', 'failed', 'unknown'))
) ENGINE=InnoDB`,
		}
	default:
		return []string{
			`CREATE TABLE IF NOT EXISTS ` + t + ` (
	` + k + ` TEXT NOT NULL PRIMARY KEY,
	raw_key BLOB,
	state TEXT NOT NULL CHECK (state IN ('claimed', 'done', 'failed', 'unknown')),
	fence INTEGER NOT NULL,
	lease_expiry INTEGER NOT NULL,
	done_at INTEGER,
	expires_at INTEGER,
	claim_token TEXT NOT NULL,
	owner TEXT NOT NULL,
	fingerprint BLOB,
	result BLOB
) STRICT`,
			`CREATE INDEX IF NOT EXISTS ` + d.quote(indexName(table, "expires_at")) + ` ON ` + t +
				` (expires_at) WHERE expires_at IS NOT NULL`,
			`CREATE INDEX IF NOT EXISTS ` + d.quote(indexName(table, "unknown")) + ` ON ` + t +
				` (lease_expiry, ` + k + `) WHERE state = 'unknown'`,
		}
	}
}

// CreateSchema creates the table and its indexes unless they exist. It is
// idempotent and safe to run from several processes at once (on PostgreSQL the
// statements run in one transaction under an advisory lock derived from the
// table name, since concurrent CREATE TABLE IF NOT EXISTS can fail there). It
// returns the database's error, wrapped.
func (s *Store) CreateSchema(ctx context.Context) error {
	stmts := s.DDL()
	if s.dialect != Postgres {
		for _, q := range stmts {
			if _, err := s.db.ExecContext(ctx, q); err != nil {
				return s.wrapErr(ctx, err, "create schema %s", s.table)
			}
		}
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrapErr(ctx, err, "create schema %s", s.table)
	}
	defer func() { _ = tx.Rollback() }()
	sum := sha256.Sum256([]byte("oncegate schema " + s.table))
	lock := int64(0)
	for _, b := range sum[:8] {
		lock = lock<<8 | int64(b)
	}
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", lock); err != nil {
		return s.wrapErr(ctx, err, "create schema %s: lock", s.table)
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return s.wrapErr(ctx, err, "create schema %s", s.table)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.wrapErr(ctx, err, "create schema %s: commit", s.table)
	}
	return nil
}
