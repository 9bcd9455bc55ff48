package demo

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// execute publishes the orders, injects the trouble and waits until every
// message is acked or dead-lettered.
func (r *run) execute(ctx context.Context) (Report, error) {
	orders := makeOrders(r.o.Orders, r.o.Seed, int(r.plan.AckDeadline/time.Millisecond)+2000)
	fmt.Fprintf(r.o.Out, "oncegate demo: %d orders, %d workers, backend %s\n", len(orders), r.o.Workers, r.backendName)
	fmt.Fprintf(r.o.Out, "plan: lease %s renewed every %s, work deadline %s, ack deadline %s, backoff %s–%s, max delivery attempts %d\n",
		r.plan.Lease, r.plan.Heartbeat, r.plan.WorkDeadline, r.plan.AckDeadline, r.plan.MinBackoff, r.plan.MaxBackoff, r.plan.MaxDeliveryAttempts)

	var mu sync.Mutex
	redeliver := map[string]order{}
	var ids []string
	r.onAck = func(id string) {
		mu.Lock()
		o, ok := redeliver[id]
		delete(redeliver, id)
		mu.Unlock()
		if ok {
			r.push(ctx, int(r.next.Add(1)), id, o)
		}
	}
	expect := map[string]bool{}
	start := time.Now()
	var killed atomic.Bool
	for i, o := range orders {
		if !o.body.Poison {
			expect["demo:"+o.body.Order] = true
		}
		copies := 1
		if o.republish {
			copies = 2
		}
		for range copies {
			id, err := r.ps.Publish(ctx, r.topo.Topic, o.data(), map[string]string{"order_id": o.body.Order})
			if err != nil {
				return Report{}, err
			}
			mu.Lock()
			ids = append(ids, id)
			if o.redeliver {
				redeliver[id] = o
			}
			mu.Unlock()
			if o.concurrent {
				r.push(ctx, i, id, o)
				r.push(ctx, i+1, id, o)
			}
		}
		if !r.o.NoKill && i == len(orders)*2/5 && killed.CompareAndSwap(false, true) {
			r.killOne(ctx)
		}
	}

	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	var dead int
	for {
		dl, err := r.ps.DrainDeadLetters(ctx, r.topo)
		if err == nil {
			dead += len(dl)
		}
		acked := 0
		for _, id := range ids {
			if _, ok := r.acked.Load(id); ok {
				acked++
			}
		}
		if acked+dead >= len(ids) {
			break
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(r.o.Out, "timed out with %d of %d messages acked, %d dead-lettered\n", acked, len(ids), dead)
			return r.report(start, ids, dead, expect), fmt.Errorf("demo: %w", ctx.Err())
		case <-tick.C:
			s := r.supplier.Report()
			fmt.Fprintf(r.o.Out, "  %5.1fs  acked %d/%d  dead-lettered %d  supplier orders %d\n",
				time.Since(start).Seconds(), acked, len(ids), dead, s.Orders)
		case <-time.After(200 * time.Millisecond):
		}
	}
	r.inflight.Wait()
	return r.report(start, ids, dead, expect), nil
}
