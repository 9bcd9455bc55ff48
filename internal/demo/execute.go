package demo

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// message is one published message and the order it carries.
type message struct {
	id string
	o  order
}

// execute publishes the orders, injects the trouble and waits until every
// message is acked or dead-lettered.
func (r *run) execute(ctx context.Context) (Report, error) {
	orders := makeOrders(r.o.Orders, r.o.Seed, int(r.plan.AckDeadline/time.Millisecond)+2000)
	fmt.Fprintf(r.o.Out, "oncegate demo: %d orders, %d workers, backend %s, namespace %s, pubsub %s\n", len(orders), r.o.Workers, r.store.name, r.o.Namespace, r.pubsubName())
	fmt.Fprintf(r.o.Out, "plan: lease %s renewed every %s, work deadline %s, ack deadline %s, %s, max delivery attempts %d\n",
		r.plan.Lease, r.plan.Heartbeat, r.plan.WorkDeadline, r.plan.AckDeadline, r.retryPolicy(), r.plan.MaxDeliveryAttempts)
	if r.o.Pull {
		fmt.Fprintf(r.o.Out, "pull: ack deadline extended in steps of at most %s, %d messages outstanding per worker, drain %s on SIGTERM\n",
			r.pullPlan.MaxExtensionPeriod, r.pullPlan.MaxOutstandingMessages, r.pullPlan.Drain)
	}

	var mu sync.Mutex
	redeliver := map[string]order{}
	var msgs []message
	r.onAck = func(id string) {
		mu.Lock()
		o, ok := redeliver[id]
		if !r.o.Pull {
			delete(redeliver, id)
		}
		mu.Unlock()
		switch {
		case !ok:
		case r.o.Pull:
			// A copy under a new message id, the same order_id: the entry
			// leaves redeliver only once the copy is in msgs, so the wait
			// below cannot end before it.
			r.inflight.Add(1)
			go func() {
				defer r.inflight.Done()
				cid, err := r.publishCopy(ctx, o)
				mu.Lock()
				if err == nil {
					msgs = append(msgs, message{id: cid, o: o})
				}
				delete(redeliver, id)
				mu.Unlock()
			}()
		default:
			r.push(ctx, int(r.next.Add(1)), id, o)
		}
	}
	// snapshot returns the messages so far and, for pull, how many copies
	// are still to be published.
	snapshot := func(dead map[string]bool) ([]message, int) {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		if r.o.Pull {
			n = pending(redeliver, dead)
		}
		return append([]message(nil), msgs...), n
	}
	start := time.Now()
	r.published.Store(true)
	var killed atomic.Bool
	for i, o := range orders {
		copies := 1
		if o.republish {
			copies = 2
		}
		for range copies {
			id, err := r.ps.Publish(ctx, r.topo.Topic, o.data(), map[string]string{"order_id": o.body.Order})
			if err != nil {
				all, _ := snapshot(nil)
				rep := r.report(start, all, nil, orders)
				if context.Cause(ctx) == errTimedOut {
					r.timedOut(&rep, r.unsettled(all, nil), all, nil)
				}
				return rep, fmt.Errorf("demo: publish %s: %w", o.body.Order, context.Cause(ctx))
			}
			mu.Lock()
			msgs = append(msgs, message{id: id, o: o})
			if o.redeliver {
				redeliver[id] = o
			}
			mu.Unlock()
			switch {
			case o.concurrent && r.o.Pull:
				cid, err := r.publishCopy(ctx, o)
				if err != nil {
					all, _ := snapshot(nil)
					return r.report(start, all, nil, orders), err
				}
				mu.Lock()
				msgs = append(msgs, message{id: cid, o: o})
				mu.Unlock()
			case o.concurrent:
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
	dead := map[string]bool{}
	for {
		all, _ := snapshot(nil)
		if dl, err := r.ps.DrainDeadLetters(ctx, r.topo); err == nil {
			for _, m := range dl {
				r.markDead(m.GetMessageId(), m.GetAttributes()["order_id"], all, dead)
			}
		}
		waiting := r.unsettled(all, dead)
		if _, copies := snapshot(dead); len(waiting) == 0 && copies == 0 {
			break
		}
		select {
		case <-ctx.Done():
			all, _ = snapshot(dead)
			if context.Cause(ctx) != errTimedOut {
				return r.report(start, all, dead, orders), context.Canceled
			}
			fmt.Fprintf(r.o.Out, "timed out after %s, still waiting for %s\n", r.o.Timeout, r.describe(waiting))
			rep := r.report(start, all, dead, orders)
			r.timedOut(&rep, waiting, all, dead)
			return rep, fmt.Errorf("%w after %s waiting for %d messages", errTimedOut, r.o.Timeout, len(waiting))
		case <-tick.C:
			s := r.supplier.Report()
			fmt.Fprintf(r.o.Out, "  %5.1fs  acked %d/%d  dead-lettered %d  supplier orders %d  waiting for %s\n",
				time.Since(start).Seconds(), len(all)-len(waiting)-len(dead), len(all), len(dead), s.Orders, r.describe(waiting))
		case <-time.After(200 * time.Millisecond):
		}
	}
	r.inflight.Wait()
	all, _ := snapshot(dead)
	return r.report(start, all, dead, orders), nil
}

// publishCopy publishes another message carrying o (Options.Pull's stand-in
// for a concurrent delivery or a transport redelivery) and returns its id.
func (r *run) publishCopy(ctx context.Context, o order) (string, error) {
	r.injected.Add(1)
	id, err := r.ps.Publish(ctx, r.topo.Topic, o.data(), map[string]string{"order_id": o.body.Order})
	if err != nil {
		return "", fmt.Errorf("demo: publish a copy of %s: %w", o.body.Order, context.Cause(ctx))
	}
	return id, nil
}

// unsettled returns the messages neither acked nor dead-lettered.
func (r *run) unsettled(msgs []message, dead map[string]bool) []message {
	var out []message
	for _, m := range msgs {
		if _, ok := r.acked.Load(m.id); !ok && !dead[m.id] {
			out = append(out, m)
		}
	}
	return out
}

// describe says what the unsettled messages wait for: the poison order's
// attempt n of N before it is dead-lettered, slow orders, orders that fail
// before they succeed, and how many are simply in flight.
func (r *run) describe(waiting []message) string {
	var parts []string
	inFlight := 0
	for _, m := range waiting {
		switch o := m.o.body; {
		case o.Poison:
			parts = append(parts, fmt.Sprintf("poison %s (attempt %d of %d, then dead-lettered)", o.Order, r.attempt(m.id), r.plan.MaxDeliveryAttempts))
		case o.SlowMS > 0:
			parts = append(parts, fmt.Sprintf("slow %s (its first call outlasts the %s work deadline)", o.Order, r.plan.WorkDeadline))
		case o.FailTimes > 0 && len(waiting) <= 5:
			parts = append(parts, fmt.Sprintf("%s (the supplier fails its first %d calls; attempt %d)", o.Order, o.FailTimes, r.attempt(m.id)))
		case len(waiting) <= 5:
			parts = append(parts, fmt.Sprintf("%s (attempt %d)", o.Order, r.attempt(m.id)))
		default:
			inFlight++
		}
	}
	sort.Strings(parts)
	if inFlight > 0 {
		parts = append(parts, fmt.Sprintf("%d more in flight", inFlight))
	}
	return fmt.Sprintf("%d: %s", len(waiting), strings.Join(parts, ", "))
}

// retryPolicy says how the subscription redelivers a refused message: the
// plan's backoff, or, on the emulator, which gets no retry policy (tests/doc.go:
// its retry policy can stall a subscription), the emulator's own pace.
func (r *run) retryPolicy() string {
	switch {
	case r.o.PubSub != PubSubEmulator:
		return fmt.Sprintf("backoff %s–%s", r.plan.MinBackoff, r.plan.MaxBackoff)
	case r.o.Pull:
		return "no retry policy (the emulator redelivers a nacked message at once)"
	}
	return "no retry policy (the emulator redelivers a refused push after about 1s)"
}

// pubsubName says which Pub/Sub delivers, and how.
func (r *run) pubsubName() string {
	switch {
	case r.o.Pull && r.o.PubSub == PubSubEmulator:
		return "emulator (streaming pull by the workers) at " + r.psHost
	case r.o.Pull:
		return "embedded (pstest, streaming pull by the workers)"
	}
	if r.o.PubSub == PubSubEmulator {
		return "emulator (its own push, no retry policy) at " + r.psHost
	}
	return "embedded (pstest and the push bridge)"
}

// markDead records a dead-lettered message. pstest keeps the message id; the
// emulator republishes it to the dead-letter topic under a new one, so then the
// first unsettled message of the same order is the one dead-lettered.
func (r *run) markDead(id, orderID string, msgs []message, dead map[string]bool) {
	for _, m := range msgs {
		if m.id == id {
			dead[id] = true
			return
		}
	}
	for _, m := range msgs {
		if _, acked := r.acked.Load(m.id); m.o.body.Order == orderID && !acked && !dead[m.id] {
			dead[m.id] = true
			return
		}
	}
}
