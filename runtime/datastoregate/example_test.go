package datastoregate_test

import (
	"context"
	"fmt"
	"time"

	"github.com/oncegate/oncegate/internal/dsfake"
	"github.com/oncegate/oncegate/runtime/datastoregate"
	"github.com/oncegate/oncegate/runtime/gate"
)

func Example() {
	// In production the client comes from datastore.NewClientWithDatabase (or
	// use datastoregate.Open); here it talks to the in-process fake.
	srv, err := dsfake.New()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ctx := context.Background()
	client, err := srv.NewClient(ctx, dsfake.Project, "")
	if err != nil {
		panic(err)
	}
	defer client.Close()

	store, err := datastoregate.New(client, &datastoregate.Options{Kind: "OncegateRecord"})
	if err != nil {
		panic(err)
	}
	g, err := gate.New(store, &gate.Options{Lease: time.Minute, TTL: 24 * time.Hour})
	if err != nil {
		panic(err)
	}
	for range 2 {
		err := g.Lock(ctx, "order-42", func(_ context.Context, c gate.Claim) error {
			fmt.Println("charging card, fencing token", c.Fence)
			return nil
		})
		fmt.Println(gate.OutcomeOf(err))
	}
	// Output:
	// charging card, fencing token 1
	// ran
	// duplicate
}
