package dlock_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/oncegate/oncegate/runtime/dlock"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
)

func ExampleClient_Acquire() {
	locks, _ := dlock.New(memgate.New(nil), nil)
	ctx := context.Background()

	l, _ := locks.Acquire(ctx, "invoice-run", "worker-a")
	fmt.Println("worker-a token", l.Token())

	_, err := locks.Acquire(ctx, "invoice-run", "worker-b")
	var held *gate.RecordError
	if errors.Is(err, dlock.ErrLocked) && errors.As(err, &held) {
		fmt.Println("held by", held.Record.Owner)
	}

	released, _ := l.Release(ctx)
	fmt.Println("released", released)
	l, _ = locks.Acquire(ctx, "invoice-run", "worker-b")
	fmt.Println("worker-b token", l.Token())
	// Output:
	// worker-a token 1
	// held by worker-a
	// released true
	// worker-b token 3
}

func ExampleClient_Do() {
	locks, _ := dlock.New(memgate.New(nil), &dlock.Options{Owner: "worker-a"})
	ctx := context.Background()
	err := locks.Do(ctx, "nightly-report", func(ctx context.Context, token int64) error {
		// Pass token with every write (for example through fencedsink), and stop
		// when ctx is done: context.Cause(ctx) then matches gate.ErrLeaseLost.
		fmt.Println("building the report with token", token)
		return nil
	})
	fmt.Println("err", err)
	// Output:
	// building the report with token 1
	// err <nil>
}

func ExampleClient_AdvanceFence() {
	locks, _ := dlock.New(memgate.New(nil), nil)
	ctx := context.Background()
	// The store lost its records; the sink's highest accepted token was 41.
	fence, _ := locks.AdvanceFence(ctx, "invoice-run", 41)
	again, _ := locks.AdvanceFence(ctx, "invoice-run", 7) // never lowers
	l, _ := locks.Acquire(ctx, "invoice-run", "worker-a")
	fmt.Println(fence, again, l.Token())
	// Output: 41 41 42
}
