package fencedsink_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/oncegate/oncegate/runtime/fencedsink"
)

func Example() {
	ctx := context.Background()
	db, _ := sql.Open("sqlite", "file:example?mode=memory")
	defer db.Close()
	db.SetMaxOpenConns(1) // one in-memory database
	_, _ = db.ExecContext(ctx, "CREATE TABLE orders (id TEXT PRIMARY KEY, status TEXT, fence BIGINT NOT NULL DEFAULT 0)")

	sink, _ := fencedsink.New("orders", &fencedsink.Options{KeyColumn: "id", Dialect: fencedsink.SQLite})
	setStatus := func(term *fencedsink.Term, status string) error {
		return term.Write(ctx, db, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "UPDATE orders SET status = ?1 WHERE id = ?2", status, term.Key())
			return err
		})
	}

	old := sink.Term("po-7", 41)   // a holder that paused past its lease
	fresh := sink.Term("po-7", 42) // the holder that took the lock over
	fmt.Println(setStatus(old, "packed"))
	fmt.Println(setStatus(fresh, "shipped"))
	err := setStatus(old, "cancelled")
	fmt.Println(errors.Is(err, fencedsink.ErrStaleToken), old.Ended())

	var status string
	var fence int64
	_ = db.QueryRowContext(ctx, "SELECT status, fence FROM orders WHERE id = 'po-7'").Scan(&status, &fence)
	fmt.Println(status, fence)
	// Output:
	// <nil>
	// <nil>
	// true true
	// shipped 42
}

func ExampleAffected() {
	ctx := context.Background()
	db, _ := sql.Open("sqlite", "file:affected?mode=memory")
	defer db.Close()
	db.SetMaxOpenConns(1)
	_, _ = db.ExecContext(ctx, "CREATE TABLE accounts (id TEXT PRIMARY KEY, balance BIGINT, fence BIGINT NOT NULL)")
	_, _ = db.ExecContext(ctx, "INSERT INTO accounts VALUES ('a-1', 0, 0)")

	// One guarded statement on the user's own row: the fence condition is part of
	// the UPDATE, and zero rows affected means a newer token holds the term.
	const update = "UPDATE accounts SET balance = ?1, fence = ?2 WHERE id = ?3 AND fence <= ?2"
	fmt.Println(fencedsink.Affected(db.ExecContext(ctx, update, 500, 9, "a-1")))
	err := fencedsink.Affected(db.ExecContext(ctx, update, 100, 8, "a-1"))
	fmt.Println(errors.Is(err, fencedsink.ErrStaleToken))
	// Output:
	// <nil>
	// true
}
