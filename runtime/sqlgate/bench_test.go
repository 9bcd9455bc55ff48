package sqlgate_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// BenchmarkClaimComplete measures one message's worth of store work on a fresh
// key: claim, then record done. It runs three ways against the same server in
// the same run, on tables of the same schema (CreateSchema's):
//
//   - impl=sqlgate: Store.Claim then Store.Complete;
//   - impl=floor: the least any design can do, two single-row statements (an
//     INSERT of the claimed row, an UPDATE to done) with client-side values;
//   - impl=classic: the textbook claim, a transaction with SELECT … FOR UPDATE,
//     then INSERT (or UPDATE) and COMMIT, followed by the same UPDATE to done.
//
// Compare with: benchstat -col /impl. Each iteration uses a new key, as each
// Pub/Sub message does; iterations run one after another, so the figure is the
// latency of one message's store work.
//
// On PostgreSQL, commit=sync is the server's durable default (every commit
// waits for its WAL flush, which all three designs pay twice), and commit=async
// sets synchronous_commit=off for the benchmark's sessions so the figures compare
// statements and round trips rather than the disk's flush latency. MySQL/MariaDB
// run with the server's settings (a session cannot change
// innodb_flush_log_at_trx_commit); SQLite with the settings Open uses (WAL,
// synchronous=FULL), and with synchronous=NORMAL, which in WAL mode does not
// flush on each commit, to show the statements' own cost. rtt=1ms puts a proxy in front of the server that delays
// every exchange by 1 ms, about a same-zone network round trip; every network
// run reports rtts/op, the request–response exchanges the proxy counted per
// message (a fixed number, unlike the times on a shared machine).
func BenchmarkClaimComplete(b *testing.B) {
	type setup struct {
		name   string
		d      sqlgate.Dialect
		params map[string]string
		rtt    time.Duration
	}
	async := map[string]string{"synchronous_commit": "off"}
	for _, c := range []setup{
		{"db=postgres/commit=sync/rtt=0", sqlgate.Postgres, nil, 0},
		{"db=postgres/commit=async/rtt=0", sqlgate.Postgres, async, 0},
		{"db=postgres/commit=async/rtt=1ms", sqlgate.Postgres, async, time.Millisecond},
		{"db=mysql/rtt=0", sqlgate.MySQL, nil, 0},
		{"db=mysql/rtt=1ms", sqlgate.MySQL, nil, time.Millisecond},
		{"db=sqlite/sync=full", sqlgate.SQLite, nil, 0},
		{"db=sqlite/sync=normal", sqlgate.SQLite, map[string]string{"_synchronous": "NORMAL"}, 0},
	} {
		b.Run(c.name, func(b *testing.B) {
			var p *delayProxy
			var db *sql.DB
			if c.d == sqlgate.SQLite {
				db = openDB(b, c.d, c.params)
			} else {
				p = newDelayProxy(b, serverAddr(b, c.d), c.rtt)
				addr := p.Addr()
				db = openDBVia(b, c.d, c.params, &addr)
			}
			db.SetMaxOpenConns(4)
			s := newStore(b, db, c.d)
			r := newRaw(b, db, c.d, s.Table())
			trips := func(b *testing.B, run func(*testing.B)) {
				var before int64
				if p != nil {
					before = p.Trips()
				}
				run(b)
				if p != nil {
					b.ReportMetric(float64(p.Trips()-before)/float64(b.N), "rtts/op")
				}
			}
			b.Run("impl=sqlgate", func(b *testing.B) { trips(b, func(b *testing.B) { benchSqlgate(b, s) }) })
			b.Run("impl=floor", func(b *testing.B) { trips(b, func(b *testing.B) { benchLoop(b, db, r.floor) }) })
			b.Run("impl=classic", func(b *testing.B) { trips(b, func(b *testing.B) { benchLoop(b, db, r.classic) }) })
		})
	}
}

func benchSqlgate(b *testing.B, s *sqlgate.Store) {
	ctx := context.Background()
	prefix := newToken() + ":"
	i := 0
	for b.Loop() {
		key := prefix + strconv.Itoa(i)
		i++
		res, err := s.Claim(ctx, gate.ClaimRequest{Key: key, Token: "tok", Owner: "bench", Lease: time.Minute, TTL: time.Hour})
		if err != nil || res.Status != gate.Won {
			b.Fatalf("claim: %v %v", res.Status, err)
		}
		if ok, err := s.Complete(ctx, gate.Completion{Key: key, Fence: res.Record.Fence, TTL: time.Hour}); err != nil || !ok {
			b.Fatalf("complete: %v %v", ok, err)
		}
	}
}

func benchLoop(b *testing.B, db *sql.DB, step func(context.Context, *sql.DB, string, int64) error) {
	b.Helper()
	ctx := context.Background()
	prefix := newToken() + ":"
	i := 0
	for b.Loop() {
		key := prefix + strconv.Itoa(i)
		i++
		if err := step(ctx, db, key, time.Now().UnixMilli()); err != nil {
			b.Fatal(err)
		}
	}
}

// raw holds the baseline statements for one dialect and table, prepared once
// (as sqlgate's are), so the floor pays no parsing either.
type raw struct {
	insert, done, lock, reclaim *sql.Stmt
}

func newRaw(b *testing.B, db *sql.DB, d sqlgate.Dialect, table string) raw {
	b.Helper()
	prep := func(q string) *sql.Stmt {
		st, err := db.Prepare(q)
		if err != nil {
			b.Fatalf("prepare %s: %v", q, err)
		}
		b.Cleanup(func() { _ = st.Close() })
		return st
	}
	t, k, p := `"`+table+`"`, `"key"`, func(n int) string { return "$" + strconv.Itoa(n) }
	if d == sqlgate.MySQL {
		t, k, p = "`"+table+"`", "`key`", func(int) string { return "?" }
	}
	forUpdate := " FOR UPDATE"
	if d == sqlgate.SQLite {
		forUpdate = "" // SQLite locks the whole database for a write transaction
	}
	return raw{
		insert: prep(fmt.Sprintf(`INSERT INTO %s (%s, state, fence, lease_expiry, expires_at, claim_token, owner) VALUES (%s, 'claimed', 1, %s, %s, 'tok', 'bench')`,
			t, k, p(1), p(2), p(3))),
		done: prep(fmt.Sprintf(`UPDATE %s SET state = 'done', done_at = %s, expires_at = %s WHERE %s = %s AND fence = %s`,
			t, p(1), p(2), k, p(3), p(4))),
		lock: prep(fmt.Sprintf(`SELECT state, fence, lease_expiry, expires_at FROM %s WHERE %s = %s%s`, t, k, p(1), forUpdate)),
		reclaim: prep(fmt.Sprintf(`UPDATE %s SET state = 'claimed', fence = fence + 1, lease_expiry = %s, expires_at = %s WHERE %s = %s`,
			t, p(1), p(2), k, p(3))),
	}
}

// floor: INSERT the claim, UPDATE it to done.
func (r raw) floor(ctx context.Context, db *sql.DB, key string, now int64) error {
	if _, err := r.insert.ExecContext(ctx, key, now+60_000, now+3_660_000); err != nil {
		return err
	}
	_, err := r.done.ExecContext(ctx, now, now+3_600_000, key, 1)
	return err
}

// classic: BEGIN; SELECT … FOR UPDATE; INSERT or UPDATE; COMMIT; then UPDATE to done.
func (r raw) classic(ctx context.Context, db *sql.DB, key string, now int64) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	var state string
	var fence, lease int64
	var expires sql.NullInt64
	err = tx.StmtContext(ctx, r.lock).QueryRowContext(ctx, key).Scan(&state, &fence, &lease, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		fence = 1
		_, err = tx.StmtContext(ctx, r.insert).ExecContext(ctx, key, now+60_000, now+3_660_000)
	case err == nil:
		fence++
		_, err = tx.StmtContext(ctx, r.reclaim).ExecContext(ctx, now+60_000, now+3_660_000, key)
	}
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	_, err = r.done.ExecContext(ctx, now, now+3_600_000, key, fence)
	return err
}
