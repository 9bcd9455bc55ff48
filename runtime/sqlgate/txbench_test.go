package sqlgate_test

import (
	"context"
	"database/sql"
	"strconv"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// BenchmarkLocalEffect measures one message whose effect is one INSERT into a
// table of the same database, on a fresh key, two ways in the same run:
//
//   - impl=runtx: Store.RunTx, the claim, the INSERT and the done record in one
//     transaction (exactly once);
//   - impl=lock+tx: gate.Lock over the same Store, the INSERT in a transaction
//     of its own inside the body (claim, transaction, complete: at most once,
//     the route for an external effect).
//
// Compare with: benchstat -col /impl. rtt=1ms puts a proxy that delays every
// exchange by 1 ms in front of the server, and every network run reports
// rtts/op, the request–response exchanges per message.
func BenchmarkLocalEffect(b *testing.B) {
	type setup struct {
		name   string
		d      sqlgate.Dialect
		params map[string]string
		rtt    time.Duration
	}
	async := map[string]string{"synchronous_commit": "off"}
	for _, c := range []setup{
		{"db=postgres/commit=sync/rtt=0", sqlgate.Postgres, nil, 0},
		{"db=postgres/commit=async/rtt=1ms", sqlgate.Postgres, async, time.Millisecond},
		{"db=mysql/rtt=0", sqlgate.MySQL, nil, 0},
		{"db=mysql/rtt=1ms", sqlgate.MySQL, nil, time.Millisecond},
		{"db=sqlite/sync=full", sqlgate.SQLite, nil, 0},
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
			e := newEffects(b, s)
			g, err := gate.New(s, &gate.Options{Lease: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			insert := `INSERT INTO ` + e.table + ` (id, fence) VALUES (` + ph(c.d, 1) + `, ` + ph(c.d, 2) + `)`
			ctx := context.Background()
			impls := []struct {
				name string
				run  func(key string) error
			}{
				{"impl=runtx", func(key string) error {
					return s.RunTx(ctx, key, nil, func(tx *sql.Tx, cl gate.Claim) error {
						_, err := tx.ExecContext(ctx, insert, cl.Key, cl.Fence)
						return err
					})
				}},
				{"impl=lock+tx", func(key string) error {
					return g.Lock(ctx, key, func(ctx context.Context, cl gate.Claim) error {
						tx, err := db.BeginTx(ctx, nil)
						if err != nil {
							return err
						}
						defer func() { _ = tx.Rollback() }()
						if _, err := tx.ExecContext(ctx, insert, cl.Key, cl.Fence); err != nil {
							return err
						}
						return tx.Commit()
					})
				}},
			}
			for _, impl := range impls {
				b.Run(impl.name, func(b *testing.B) {
					var before int64
					if p != nil {
						before = p.Trips()
					}
					prefix := newToken() + ":"
					i := 0
					for b.Loop() {
						i++
						if err := impl.run(prefix + strconv.Itoa(i)); err != nil {
							b.Fatal(err)
						}
					}
					if p != nil {
						b.ReportMetric(float64(p.Trips()-before)/float64(b.N), "rtts/op")
					}
				})
			}
		})
	}
}
