package sqlgate

// queries holds a Store's statements, rendered once for its dialect and table.
type queries struct {
	claim          stmt // PostgreSQL, SQLite: the claim upsert (on PostgreSQL, RunTx's)
	claimOrRead    stmt // PostgreSQL: Claim's, the upsert or the record it refused
	read           stmt // the record and the server clock
	lock           stmt // MySQL: the record, row-locked
	now            stmt // MySQL: the server clock
	insert         stmt // MySQL: a fresh claimed record, clock via LAST_INSERT_ID
	insertOrRead   stmt // MariaDB 10.5+: insert, or the stored record, in one statement
	reclaim        stmt // MySQL: overwrite a record with a won claim
	refresh        stmt // a just-won claim's lease from the clock now (see freshen)
	finish         stmt // done or failed
	release        stmt
	held           stmt // is the record claimed with this fence?
	renew          stmt
	markUnknown    stmt
	advance        stmt
	fenceOf        stmt // MySQL: the fence after advance
	purge          stmt
	listUnresolved stmt
	resolveDone    stmt
	resolveRetry   stmt
	stateOf        stmt
}

// Statement templates; see Dialect.render for the markers. Each statement that
// judges time reads the server clock ({NOW}) itself.
const (
	// claimUpsert inserts a fresh record (fence 1) or, on conflict, overwrites
	// the stored one with fence+1 when memgate would reclaim it: expired, or
	// claimed with a lapsed lease, not the caller's own token, and no
	// fingerprint mismatch; never past MaxFence. It returns the row only when it
	// wrote it, and the server clock after the write. The ON CONFLICT branch
	// runs after the conflicting row is locked, so its clock reads are taken
	// after any wait for that lock; the VALUES are computed before the INSERT
	// waits on an uncommitted row of the same key, so a fresh record written
	// after that row rolled back may carry a stale lease (see freshen).
	claimUpsert = `INSERT INTO {T} AS r (` + cols + `)
VALUES ($1, $2, 'claimed', 1, {NOW} + $3, NULL, {NOW} + $3 + $4, $5, $6, $7, NULL)
ON CONFLICT ({K}) DO UPDATE SET
	state = 'claimed',
	fence = r.fence + 1,
	lease_expiry = {NOW} + $3,
	done_at = NULL,
	expires_at = {NOW} + $3 + $4,
	claim_token = excluded.claim_token,
	owner = excluded.owner,
	fingerprint = CASE WHEN excluded.fingerprint IS NULL AND NOT {EXPIRED_R} THEN r.fingerprint ELSE excluded.fingerprint END,
	result = NULL
WHERE r.fence < {MAX} AND ({EXPIRED_R} OR (
	r.state = 'claimed' AND r.lease_expiry <= {NOW}
	AND (excluded.claim_token = '' OR r.claim_token <> excluded.claim_token)
	AND (excluded.fingerprint IS NULL OR r.fingerprint IS NULL OR r.fingerprint = excluded.fingerprint)))
RETURNING ` + cols + `, {NOW}`

	// claimOrReadPostgres (PostgreSQL) runs claimUpsert and, in the same
	// statement, reads the record when the upsert refused it, so a refused claim
	// is one round trip. Its last column tells which branch answered: true, the
	// row the upsert wrote and the clock after the write; false, the record as
	// the statement's snapshot holds it and the clock after the upsert. The read
	// sees the snapshot taken when the statement began (READ COMMITTED gives
	// each statement one snapshot, shared by its WITH queries; PostgreSQL manual,
	// "WITH Queries", data-modifying statements), so it may see an older version
	// of the record than the one the upsert refused, or none when a concurrent
	// claim created it after the statement began. Either is safe: the caller
	// judges the row it read with memgate's rules; a record that refuses at the
	// later clock refused at the snapshot too (leases and expiries only lapse),
	// so the answer is a true refusal at the statement's start, and a row that
	// looks claimable, or no row, sends the caller round again.
	claimOrReadPostgres = `WITH c AS (` + claimUpsert + `)
SELECT c.*, true FROM c
UNION ALL
SELECT ` + cols + `, {NOW}, false FROM {T} WHERE {K} = $1 AND NOT EXISTS (SELECT 1 FROM c)`

	readRecord = `SELECT ` + cols + `, {NOW} FROM {T} WHERE {K} = $1`
	lockRecord = `SELECT ` + cols + ` FROM {T} WHERE {K} = $1 FOR UPDATE`
	readNow    = `SELECT {NOW}`
	// insertFresh (MySQL) inserts a fresh claimed record and hands the server
	// clock it used back through LAST_INSERT_ID(expr); NOW() is fixed for the
	// statement, so lease_expiry and expires_at agree with it.
	insertFresh = `INSERT INTO {T} (` + cols + `)
VALUES ($1, $2, 'claimed', 1, LAST_INSERT_ID({NOW}) + $3, NULL, {NOW} + $3 + $4, $5, $6, $7, NULL)`
	// insertOrReadMariaDB (MariaDB 10.5 and later) is insertFresh that, on a
	// duplicate key, changes nothing ({K} = {K} is a no-op assignment, so no row
	// is written or logged) and returns the stored record instead: MariaDB's
	// INSERT … ON DUPLICATE KEY UPDATE … RETURNING returns the row as inserted
	// or as it stands after the update (MariaDB manual, "INSERT...RETURNING"),
	// so a refused claim is one round trip. The clock column is the statement's
	// NOW(), the one its VALUES used. On a duplicate primary key the statement
	// takes an exclusive record lock on that row, not a gap lock (MySQL manual,
	// "Locks Set by Different SQL Statements in InnoDB"), for the statement's
	// own short autocommit transaction. MySQL has no RETURNING.
	insertOrReadMariaDB = `INSERT INTO {T} (` + cols + `)
VALUES ($1, $2, 'claimed', 1, {NOW} + $3, NULL, {NOW} + $3 + $4, $5, $6, $7, NULL)
ON DUPLICATE KEY UPDATE {K} = {K}
RETURNING ` + cols + `, {NOW}`
	reclaimRow = `UPDATE {T} SET state = $3, fence = $4, lease_expiry = $5, done_at = NULL, expires_at = $6,
	claim_token = $7, owner = $8, fingerprint = $9, result = NULL WHERE {K} = $1`

	finishRecord = `UPDATE {T} SET state = $3, done_at = {NOW}, expires_at = {NOW} + $4, result = $5
WHERE {K} = $1 AND state = 'claimed' AND fence = $2`
	releaseRecord = `UPDATE {T} SET fence = fence + 1, lease_expiry = {NOW}, claim_token = ''
WHERE {K} = $1 AND state = 'claimed' AND fence = $2`
	heldRecord  = `SELECT 1 FROM {T} WHERE {K} = $1 AND state = 'claimed' AND fence = $2`
	renewRecord = `UPDATE {T} SET lease_expiry = {NOW} + $3, expires_at = {GREATEST}(expires_at, {NOW} + $3 + $4)
WHERE {K} = $1 AND state = 'claimed' AND fence = $2`
	markUnknownRecord = `UPDATE {T} SET state = 'unknown', expires_at = NULL
WHERE {K} = $1 AND state = 'claimed' AND fence = $2`

	// advanceUpsert creates a lapsed claimed record with fence $3, or raises a
	// stored fence to at least $3, and returns the fence now stored.
	advanceUpsert = `INSERT INTO {T} AS r (` + cols + `)
VALUES ($1, $2, 'claimed', $3, {NOW}, NULL, {NOW} + $4, '', '', NULL, NULL)
ON CONFLICT ({K}) DO UPDATE SET fence = {GREATEST}(r.fence, excluded.fence)
RETURNING fence`
	advanceMySQL = `INSERT INTO {T} (` + cols + `)
VALUES ($1, $2, 'claimed', $3, {NOW}, NULL, {NOW} + $4, '', '', NULL, NULL)
ON DUPLICATE KEY UPDATE fence = GREATEST(fence, $3)`
	fenceOfRecord = `SELECT fence FROM {T} WHERE {K} = $1`

	// Purge: PostgreSQL skips rows a claim holds locked at this moment; MySQL
	// has DELETE … LIMIT; SQLite (without SQLITE_ENABLE_UPDATE_DELETE_LIMIT)
	// needs the subquery. Each re-checks expiry on the row it deletes.
	purgePostgres = `DELETE FROM {T} WHERE {K} IN (SELECT {K} FROM {T} WHERE {EXPIRED} LIMIT $1 FOR UPDATE SKIP LOCKED) AND {EXPIRED}`
	purgeSQLite   = `DELETE FROM {T} WHERE {K} IN (SELECT {K} FROM {T} WHERE {EXPIRED} LIMIT $1) AND {EXPIRED}`
	purgeMySQL    = `DELETE FROM {T} WHERE {EXPIRED} LIMIT $1`

	listUnknown = `SELECT ` + cols + ` FROM {T} WHERE state = 'unknown' ORDER BY lease_expiry, {K} LIMIT $1`

	resolveAsDone = `UPDATE {T} SET state = 'done', done_at = {NOW}, expires_at = {NOW} + $2
WHERE {K} = $1 AND state = 'unknown'`
	resolveAsRetry = `UPDATE {T} SET state = 'claimed', fence = fence + 1, lease_expiry = {NOW},
	expires_at = {NOW} + $2, claim_token = '' WHERE {K} = $1 AND state = 'unknown'`
	stateOfRecord = `SELECT state FROM {T} WHERE {K} = $1`
)

func buildQueries(d Dialect, table string) queries {
	r := func(tmpl string) stmt { return d.render(tmpl, table) }
	q := queries{
		read:           r(readRecord),
		finish:         r(finishRecord),
		release:        r(releaseRecord),
		held:           r(heldRecord),
		renew:          r(renewRecord),
		markUnknown:    r(markUnknownRecord),
		listUnresolved: r(listUnknown),
		resolveDone:    r(resolveAsDone),
		resolveRetry:   r(resolveAsRetry),
		stateOf:        r(stateOfRecord),
	}
	switch d {
	case MySQL:
		q.lock = r(lockRecord)
		q.now = r(readNow)
		q.insert = r(insertFresh)
		q.insertOrRead = r(insertOrReadMariaDB)
		q.reclaim = r(reclaimRow)
		q.refresh = r(refreshLeaseMySQL)
		q.advance = r(advanceMySQL)
		q.fenceOf = r(fenceOfRecord)
		q.purge = r(purgeMySQL)
	case Postgres:
		q.claim = r(claimUpsert)
		q.claimOrRead = r(claimOrReadPostgres)
		q.refresh = r(refreshLeaseRow)
		q.advance = r(advanceUpsert)
		q.purge = r(purgePostgres)
	default:
		q.claim = r(claimUpsert)
		q.refresh = r(refreshLeaseRow)
		q.advance = r(advanceUpsert)
		q.purge = r(purgeSQLite)
	}
	return q
}
