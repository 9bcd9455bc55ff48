package pathcost

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncegate/oncegate/bench/roundtrip"
	"github.com/oncegate/oncegate/bench/stores"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/push"
)

// contenders is how many deliveries of one key arrive at once.
const contenders = 64

// TestContention delivers one message 64 times at once, through four
// instances sharing the store, with a body that holds the key until every other
// delivery has been answered. Exactly one body runs; each of the other 63 is
// answered 503 (in progress: Pub/Sub redelivers later) after exactly one port
// call, a claim, and wantTrips' held store round trips, or at most heldRace
// for a claim that raced the winner to create the record; none waits for the
// holder's body.
func TestContention(t *testing.T) {
	for _, kind := range stores.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			want := wantTrips[kind]
			s := openStore(t, kind, false, 0)
			var answered, bodies atomic.Int32
			allAnswered := make(chan struct{})
			body := func(ctx context.Context, _ *push.Message, _ gate.Claim) error {
				bodies.Add(1)
				select {
				case <-allAnswered:
					return nil
				case <-time.After(time.Minute):
					return fmt.Errorf("only %d of %d other deliveries answered within a minute", answered.Load(), contenders-1)
				}
			}
			var ins []instance
			for range 4 {
				ins = append(ins, newInstance(t, s, 100, body))
			}
			// Warm the pools, scripts and statements on another key.
			close(allAnswered)
			for _, in := range ins {
				if st := deliver(in, envelope(t, "warm-"+fmt.Sprint(len(ins))), new(roundtrip.Counter)); st != http.StatusNoContent {
					t.Fatalf("warm-up: status %d", st)
				}
			}
			allAnswered = make(chan struct{})
			bodies.Store(0)

			msg := envelope(t, "2001")
			type result struct {
				status int
				c      *roundtrip.Counter
			}
			results := make([]result, contenders)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range contenders {
				wg.Go(func() {
					c := new(roundtrip.Counter)
					<-start
					st := deliver(ins[i%len(ins)], msg, c)
					results[i] = result{st, c}
					if st != http.StatusNoContent && answered.Add(1) == contenders-1 {
						close(allAnswered)
					}
				})
			}
			close(start)
			wg.Wait()

			got := Contention{Backend: string(kind), Deliveries: contenders, Bodies: int(bodies.Load()), RefusedTripsMin: -1}
			for _, r := range results {
				calls, trips := r.c.Sum(roundtrip.PortCalls...), kind.Trips(r.c)
				if r.c.Get(roundtrip.CallComplete) > 0 {
					got.WinnerTrips = trips
					continue
				}
				got.Refused++
				got.RefusedStatus = r.status
				got.RefusedCallsMax = max(got.RefusedCallsMax, calls)
				got.RefusedTripsMax = max(got.RefusedTripsMax, trips)
				if got.RefusedTripsMin < 0 || trips < got.RefusedTripsMin {
					got.RefusedTripsMin = trips
				}
				got.RefusedTripsTotal += trips
				if r.status != http.StatusServiceUnavailable || calls != 1 || trips != want.held && trips != want.heldRace {
					t.Errorf("refused delivery: status %d, %d port calls, %d round trips (%s); want 503, 1 call, %d (or %d after a lost race) round trips",
						r.status, calls, trips, r.c, want.held, want.heldRace)
				}
			}
			if got.Bodies != 1 || got.Refused != contenders-1 {
				t.Errorf("%d bodies ran and %d deliveries were refused; want 1 and %d", got.Bodies, got.Refused, contenders-1)
			}
			recordContention(got)
		})
	}
}
