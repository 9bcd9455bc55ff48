package faults_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// TestStoreFrozenAfterTheBodyComesBackWithinBudget freezes a real Redis and a
// real PostgreSQL (a toxiproxy black hole) right after the body ran, for
// longer than the complete's phase but less than the complete's and the
// unknown mark's together, then redelivers the message once the lease has
// lapsed: the body never runs twice. With "upstream" the store receives
// nothing while frozen, so the unknown mark, in a phase of its own, is what
// lands; with "downstream" the complete is applied but its answers are lost,
// so a retry must recognise the done record at its own fence. Before the
// complete was retried and the mark had its own phase, the upstream case left
// the record claimed and the redelivery ran the body again at fence 2.
func TestStoreFrozenAfterTheBodyComesBackWithinBudget(t *testing.T) {
	opts := gate.Options{Lease: time.Second, TTL: 10 * time.Minute, WorkDeadline: 500 * time.Millisecond,
		StoreTimeout: storeTimeout, Logger: quietLog}
	freeze := storeTimeout + storeTimeout/2 // past the complete's phase, inside the mark's
	for _, st := range netStores {
		for _, stream := range []string{"upstream", "downstream"} {
			t.Run(st.name+"/"+stream, func(t *testing.T) {
				fp := newProxy(t, st.upstream(t))
				g, err := gate.New(st.make(t, fp.Addr(), 1)[0], &opts)
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				runs := 0
				body := func(context.Context, gate.Claim) error {
					runs++
					fp.pulseAsync(blackHole(stream), freeze) // the store freezes after the effect
					return nil
				}
				err = g.Lock(ctx, "frozen", body)
				if err != nil && !errors.Is(err, gate.ErrNotRecorded) {
					t.Fatalf("Lock = %v (%v), want done or not-recorded", err, gate.OutcomeOf(err))
				}
				if !gate.OutcomeOf(err).Ack() {
					t.Fatalf("outcome %v is not acked", gate.OutcomeOf(err))
				}
				fp.pending.Wait() // the store is back
				// Pub/Sub redelivers after the lease lapsed, on the store's own
				// clock, which the test cannot move.
				<-time.After(opts.Lease + 500*time.Millisecond)
				err2 := g.Lock(ctx, "frozen", body)
				if !errors.Is(err2, gate.ErrDuplicate) && !errors.Is(err2, gate.ErrUnknownOutcome) {
					t.Errorf("redelivery after the store came back: %v, want duplicate or unknown-outcome", err2)
				}
				if runs != 1 {
					t.Fatalf("the body ran %d times (first answer %v, redelivery %v), want 1", runs, err, err2)
				}
				t.Logf("first answer: %v; redelivery: %v", gate.OutcomeOf(err), gate.OutcomeOf(err2))
			})
		}
	}
}
