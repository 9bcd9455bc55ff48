package demo

import (
	"context"
	"strings"

	"github.com/oncegate/oncegate/internal/localpubsub"
)

// setUpPull is setUp for pull workers (Options.Pull): Pub/Sub first (pstest
// in this process, which the workers reach over loopback as they would reach
// the emulator, or the emulator), a pull subscription with the plan's ack
// deadline and dead-letter policy, then the workers, each receiving from it
// with the receive settings PullPlan sized. env is the workers' environment
// so far. The emulator's subscription has no retry policy, as in push mode
// (setUpEmulator): without one it redelivers a nacked message at once.
func (r *run) setUpPull(ctx context.Context, env []string) error {
	if r.o.PubSub == PubSubEmulator {
		if err := r.connectEmulator(ctx); err != nil {
			return err
		}
	} else {
		var err error
		if r.ps, err = localpubsub.Start(ctx, "oncegate-demo"); err != nil {
			return err
		}
		r.psHost = r.ps.Server.Addr
		r.topo = r.ps.Names("orders")
	}
	r.topo.Subscription = strings.TrimSuffix(r.topo.Subscription, "-push") + "-pull"
	if err := r.ps.CreateWith(ctx, r.topo, r.plan, localpubsub.CreateOptions{NoRetryPolicy: r.o.PubSub == PubSubEmulator}); err != nil {
		return err
	}
	env = append(env, "PUBSUB_EMULATOR_HOST="+r.psHost, "ONCEGATE_PULL_SUBSCRIPTION="+r.topo.Subscription)
	for k, v := range r.pullPlan.Env() {
		env = append(env, k+"="+v)
	}
	return r.startWorkers(ctx, append(env, r.o.WorkerEnv...))
}

// pending returns the orders that still wait for a copy to be published
// (Options.Pull: a transport redelivery is played as a copy published once the
// first was acked), leaving out those whose message was dead-lettered, which
// is never acked.
func pending(redeliver map[string]order, dead map[string]bool) int {
	n := 0
	for id := range redeliver {
		if !dead[id] {
			n++
		}
	}
	return n
}
