package sqlgate_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// exampleStore opens a Store on a fresh SQLite file holding the examples'
// application tables, and returns it with the function that removes it.
func exampleStore(ctx context.Context) (*sqlgate.Store, func()) {
	dir, err := os.MkdirTemp("", "sqlgate-tx-example")
	if err != nil {
		panic(err)
	}
	store, err := sqlgate.Open(ctx, "sqlite:"+filepath.Join(dir, "app.db"), nil)
	if err != nil {
		panic(err)
	}
	if err := store.CreateSchema(ctx); err != nil {
		panic(err)
	}
	for _, q := range []string{
		"CREATE TABLE accounts (id TEXT PRIMARY KEY, balance INTEGER NOT NULL)",
		"INSERT INTO accounts VALUES ('alice', 0)",
		"CREATE TABLE invoice_numbers (series TEXT PRIMARY KEY, last INTEGER NOT NULL)",
		"INSERT INTO invoice_numbers VALUES ('A', 41)",
		"CREATE TABLE orders (id TEXT PRIMARY KEY, status TEXT NOT NULL)",
		"CREATE TABLE outbox (id TEXT PRIMARY KEY, body TEXT NOT NULL)",
	} {
		if _, err := store.DB().ExecContext(ctx, q); err != nil {
			panic(err)
		}
	}
	return store, func() { _ = store.Close(); _ = os.RemoveAll(dir) }
}

// A message credits an account exactly once: the credit, the claim and the
// done record commit together, so the redelivery finds the key done.
func ExampleStore_RunTx() {
	ctx := context.Background()
	store, cleanup := exampleStore(ctx)
	defer cleanup()

	credit := func(tx *sql.Tx, c gate.Claim) error {
		_, err := tx.ExecContext(ctx, "UPDATE accounts SET balance = balance + 100 WHERE id = 'alice'")
		return err
	}
	// The key is stable across redeliveries of one message.
	key := gate.OperationKey("credit", "msg-7")
	for range 2 { // a delivery and its redelivery
		err := store.RunTx(ctx, key, nil, credit)
		fmt.Println(gate.OutcomeOf(err))
	}

	var balance int
	_ = store.DB().QueryRowContext(ctx, "SELECT balance FROM accounts WHERE id = 'alice'").Scan(&balance)
	fmt.Println("balance", balance)
	// Output:
	// ran
	// duplicate
	// balance 100
}

// The caller owns the transaction: InTx adds the claim and the done record to
// it, and the caller commits.
func ExampleStore_InTx() {
	ctx := context.Background()
	store, cleanup := exampleStore(ctx)
	defer cleanup()

	tx, err := store.DB().BeginTx(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tx.Rollback() // undoes the claim and the writes unless committed

	err = store.InTx(ctx, tx, gate.OperationKey("credit", "msg-8"), nil, func(tx *sql.Tx, c gate.Claim) error {
		_, err := tx.ExecContext(ctx, "UPDATE accounts SET balance = balance + 100 WHERE id = 'alice'")
		return err
	})
	switch {
	case errors.Is(err, gate.ErrDuplicate):
		fmt.Println("already credited")
		return
	case err != nil:
		fmt.Println(err) // the deferred Rollback leaves nothing behind
		return
	}
	if err := tx.Commit(); err != nil {
		fmt.Println(err) // nothing committed: the redelivery runs again
		return
	}
	fmt.Println("credited")
	// Output: credited
}

// Tenants that use the same client key get separate records, because the key
// is scoped by the principal.
func ExampleStore_RunTx_principalScopedKeys() {
	ctx := context.Background()
	store, cleanup := exampleStore(ctx)
	defer cleanup()

	for _, tenant := range []string{"acme", "globex"} {
		key := gate.OperationKey(tenant, "order-1") // principal first, then the client's key
		err := store.RunTx(ctx, key, &sqlgate.TxOptions{Namespace: "orders"}, func(tx *sql.Tx, c gate.Claim) error {
			fmt.Println("run", c.Key)
			return nil
		})
		if err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// run orders:acme:order-1
	// run orders:globex:order-1
}

// Invoice numbers come from a counter row: every call runs, one transaction at
// a time per series, and none records anything about the key.
func ExampleStore_RunLocked() {
	ctx := context.Background()
	store, cleanup := exampleStore(ctx)
	defer cleanup()

	for range 2 {
		var issued int
		err := store.RunLocked(ctx, "invoice-series-A", nil, func(tx *sql.Tx) error {
			if err := tx.QueryRowContext(ctx, "SELECT last + 1 FROM invoice_numbers WHERE series = 'A'").Scan(&issued); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, "UPDATE invoice_numbers SET last = ? WHERE series = 'A'", issued)
			return err
		})
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("issued A-%d\n", issued)
	}
	// Output:
	// issued A-42
	// issued A-43
}

// LockTx takes the same lock inside a transaction the caller owns.
func ExampleStore_LockTx() {
	ctx := context.Background()
	store, cleanup := exampleStore(ctx)
	defer cleanup()

	tx, err := store.DB().BeginTx(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tx.Rollback()
	if err := store.LockTx(ctx, tx, "invoice-series-A"); err != nil {
		fmt.Println(err)
		return
	}
	// Reads and writes here never interleave with another holder of the lock.
	if _, err := tx.ExecContext(ctx, "UPDATE invoice_numbers SET last = last + 1 WHERE series = 'A'"); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tx.Commit()) // the commit releases the lock
	// Output: <nil>
}

// A local write and an external call for one message: the transaction writes
// the order and an outbox row together, exactly once; the email goes out later
// under gate.Lock, keyed by the outbox row, because a rollback cannot take an
// email back.
func Example_outbox() {
	ctx := context.Background()
	store, cleanup := exampleStore(ctx)
	defer cleanup()

	// 1. In one transaction: the order and the outbox row for its email.
	err := store.RunTx(ctx, gate.OperationKey("order-placed", "po-1042"), nil, func(tx *sql.Tx, c gate.Claim) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO orders (id, status) VALUES ('po-1042', 'placed')"); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO outbox (id, body) VALUES ('mail-po-1042', 'Thanks for order po-1042')")
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	// 2. A sender, for each outbox row: the external call under gate.Lock.
	g, err := gate.New(store, &gate.Options{Namespace: "outbox", Lease: time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = g.Lock(ctx, "mail-po-1042", func(ctx context.Context, c gate.Claim) error {
		fmt.Println("send the email; idempotency key", c.Key, "fence", c.Fence)
		return nil
	})
	fmt.Println(gate.OutcomeOf(err))
	// Output:
	// send the email; idempotency key outbox:mail-po-1042 fence 1
	// ran
}
