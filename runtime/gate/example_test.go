package gate_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
)

func ExampleGate_Lock() {
	g, _ := gate.New(memgate.New(nil), &gate.Options{Namespace: "orders"})
	ctx := context.Background()
	charge := func(ctx context.Context, c gate.Claim) error {
		// Call the payment API here, passing c.Key as its idempotency key and
		// c.Fence as the fencing token.
		fmt.Println("charged", c.Key, "fence", c.Fence)
		return nil
	}
	_ = g.Lock(ctx, "po-1042", charge)
	err := g.Lock(ctx, "po-1042", charge) // a redelivery
	fmt.Println(errors.Is(err, gate.ErrDuplicate), gate.OutcomeOf(err), gate.OutcomeOf(err).Ack())
	// Output:
	// charged orders:po-1042 fence 1
	// true duplicate true
}

func ExampleGate_Mutex() {
	g, _ := gate.New(memgate.New(nil), nil)
	ctx := context.Background()
	for _, status := range []string{"packed", "shipped"} {
		_ = g.Mutex(ctx, "order-7", func(ctx context.Context, c gate.Claim) error {
			fmt.Println("apply", status, "fence", c.Fence)
			return nil
		})
	}
	// Output:
	// apply packed fence 1
	// apply shipped fence 3
}

// Every answer an adapter gives comes from one table: the outcome's name (the
// X-Oncegate-Outcome header), its HTTP status, whether Pub/Sub acks it, and its
// log level.
func ExampleOutcome() {
	for _, o := range []gate.Outcome{gate.OutcomeRan, gate.OutcomeInProgress, gate.OutcomeBodyFailed,
		gate.OutcomeRejected, gate.OutcomeMalformed} {
		fmt.Println(o, o.HTTPStatus(), o.Ack(), o.LogLevel())
	}
	// Output:
	// ran 204 true INFO
	// in-progress 503 false WARN
	// body-failed 500 false ERROR
	// rejected 409 false ERROR
	// malformed 400 false WARN
}
