package sqlgate_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// A worker runs a side effect once per key over SQLite, the embedded default.
// With PostgreSQL or MySQL only the DSN changes.
func Example() {
	dir, err := os.MkdirTemp("", "sqlgate-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	store, err := sqlgate.Open(ctx, "sqlite:"+filepath.Join(dir, "gate.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	if err := store.CreateSchema(ctx); err != nil {
		fmt.Println(err)
		return
	}
	g, err := gate.New(store, &gate.Options{Lease: time.Minute, TTL: 24 * time.Hour})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 2 { // a delivery and its redelivery
		err := g.Lock(ctx, "order-42", func(ctx context.Context, c gate.Claim) error {
			fmt.Println("charging order 42, fencing token", c.Fence)
			return nil
		})
		fmt.Println(gate.OutcomeOf(err))
	}
	// Output:
	// charging order 42, fencing token 1
	// ran
	// duplicate
}

// DDL gives the schema for teams that run their own migrations.
func ExampleStore_DDL() {
	store, err := sqlgate.New(nil, sqlgate.Postgres, nil)
	fmt.Println(store == nil, err)

	db := openExampleDB()
	defer db.Close()
	store, _ = sqlgate.New(db, sqlgate.Postgres, &sqlgate.Options{Table: "payments_gate"})
	for _, stmt := range store.DDL() {
		fmt.Println(stmt + ";")
	}
	// Output:
	// true sqlgate.New: db is nil
	// CREATE TABLE IF NOT EXISTS "payments_gate" (
	// 	"key" text COLLATE "C" NOT NULL PRIMARY KEY,
	// 	raw_key bytea,
	// 	state text NOT NULL CHECK (state IN ('claimed', 'done', 'failed', 'unknown')),
	// 	fence bigint NOT NULL,
	// 	lease_expiry bigint NOT NULL,
	// 	done_at bigint,
	// 	expires_at bigint,
	// 	claim_token text NOT NULL,
	// 	owner text NOT NULL,
	// 	fingerprint bytea,
	// 	result bytea
	// );
	// CREATE INDEX IF NOT EXISTS "payments_gate_expires_at" ON "payments_gate" (expires_at) WHERE expires_at IS NOT NULL;
	// CREATE INDEX IF NOT EXISTS "payments_gate_unknown" ON "payments_gate" (lease_expiry, "key") WHERE state = 'unknown';
}

// openExampleDB returns a pool that is never connected: New and DDL do not
// touch the database.
func openExampleDB() *sql.DB {
	db, _ := sql.Open("pgx", "postgres://example.invalid/db")
	return db
}
