package dsfake_test

import (
	"context"
	"fmt"

	"cloud.google.com/go/datastore"

	"github.com/oncegate/oncegate/internal/dsfake"
)

func Example() {
	srv, err := dsfake.New()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := srv.NewClient(ctx, dsfake.Project, "")
	if err != nil {
		panic(err)
	}
	defer c.Close()

	srv.AbortCommits(1) // the first attempt loses a (simulated) race
	_, err = c.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
		_, err := tx.Put(datastore.NameKey("Greeting", "hi", nil), &struct{ Text string }{"hello"})
		return err
	})
	fmt.Println(err, srv.Count(dsfake.MethodCommit), srv.Len())
	// Output: <nil> 2 1
}
