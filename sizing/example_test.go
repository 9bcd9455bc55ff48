package sizing_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/oncegate/oncegate/sizing"
)

func ExamplePlan_Validate() {
	p := sizing.Plan{
		Lease:        60 * time.Second,
		WorkDeadline: 60 * time.Second,
		AckDeadline:  5 * time.Second,
	}
	err := p.Validate()
	fmt.Println(err)
	fmt.Println(errors.Is(err, sizing.ErrUnsafePlan))
	// Output:
	// sizing: 2 problems with the plan:
	//   - Subscription ack deadline must be 10s–600s (got 5s); raise it or leave zero for the default
	//   - Lease 1m must exceed the work deadline 1m when no heartbeat renews it (invariant 1); raise the lease above 1m or set a heartbeat of at most a third of the lease
	// true
}

func ExamplePlan_Attempts() {
	// An unrenewed 15-minute lease with the default 10 s minimum backoff.
	a := sizing.Plan{Lease: 15 * time.Minute, WorkDeadline: 10 * time.Minute}.Attempts()
	fmt.Printf("W=%s conservative=%d doubling=%d required=%d\n", a.Wait, a.Conservative, a.Doubling, a.Required)
	// Output:
	// W=15m0s conservative=91 doubling=8 required=93
}

func ExampleRecommend() {
	p, err := sizing.Recommend(sizing.Plan{WorkDeadline: 2 * time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Lease, p.Heartbeat, p.AckDeadline, p.MinBackoff, p.MaxDeliveryAttempts)

	// A three-hour unrenewed lease needs a longer minimum backoff to fit 100 attempts.
	p, _ = sizing.Recommend(sizing.Plan{Lease: 3 * time.Hour, WorkDeadline: 2 * time.Minute})
	fmt.Println(p.MinBackoff, p.MaxDeliveryAttempts)
	// Output:
	// 1m0s 20s 2m6s 10s 23
	// 1m52s 100
}

func ExamplePlan_Env() {
	env := sizing.Plan{Lease: time.Minute, Heartbeat: 20 * time.Second, WorkDeadline: time.Minute}.Env()
	for _, k := range sizing.EnvNames() {
		fmt.Printf("%s=%s\n", k, env[k])
	}
	// Output:
	// ONCEGATE_LEASE=1m
	// ONCEGATE_TTL=3h
	// ONCEGATE_HEARTBEAT=20s
	// ONCEGATE_WORK_DEADLINE=1m
	// ONCEGATE_SHUTDOWN_GRACE=10s
	// ONCEGATE_ACK_DEADLINE=1m6s
	// ONCEGATE_MIN_BACKOFF=10s
	// ONCEGATE_MAX_BACKOFF=10m
	// ONCEGATE_MAX_DELIVERY_ATTEMPTS=17
	// ONCEGATE_REQUEST_TIMEOUT=5m
	// ONCEGATE_STORE_TIMEOUT=2s
	// ONCEGATE_DEAD_LETTER_REPLAY_WINDOW=0s
	// ONCEGATE_STORE_OUTAGE=0s
}

func ExamplePlan_Horizon() {
	// The recommended renewed lease around a minute of work: 17 attempts, each
	// up to the 66 s ack deadline, 16 retries each up to the 600 s maximum
	// backoff. The default TTL is that horizon rounded up to whole hours.
	p := sizing.Plan{Lease: time.Minute, Heartbeat: 20 * time.Second, WorkDeadline: time.Minute}
	fmt.Println(sizing.FormatDuration(p.Horizon()), sizing.FormatDuration(p.WithDefaults().TTL))

	// A one-hour TTL is refused with the TTL to use.
	p.TTL = time.Hour
	fmt.Println(p.Validate())
	// Output:
	// 2h58m42s 3h
	// sizing: TTL 1h must be at least the redelivery horizon 2h58m42s (17 attempts × 1m6s ack deadline + 16 × 10m max backoff), or a late redelivery finds the done record expired and runs the work again (invariant 4); raise the TTL to at least 2h58m42s, or lower the max backoff to 2m34s
}

func ExamplePlan_Budget() {
	// Claim, work, complete and unknown mark, 2 s per store phase by default.
	p := sizing.Plan{Lease: time.Minute, Heartbeat: 20 * time.Second, WorkDeadline: time.Minute, AckDeadline: time.Minute}
	fmt.Println(sizing.FormatDuration(p.Budget()))
	fmt.Println(p.Validate())
	// Output:
	// 1m6s
	// sizing: Time budget 1m6s (claim 2s + work deadline 1m + complete 2s + unknown mark 2s) exceeds the subscription ack deadline 1m, so the answer for a processed message can reach Pub/Sub after it gave up and redelivered (invariant 5); raise the ack deadline to at least 1m6s, or lower the work deadline to 54s
}

func ExampleFromEnv() {
	env := map[string]string{"ONCEGATE_LEASE": "60", "ONCEGATE_WORK_DEADLINE": "30s"}
	_, err := sizing.FromEnv(func(k string) string { return env[k] })
	fmt.Println(err)

	// A process passes os.Getenv.
	env["ONCEGATE_LEASE"] = "1m"
	p, err := sizing.FromEnv(func(k string) string { return env[k] })
	fmt.Println(p.Lease, p.WorkDeadline, p.MaxDeliveryAttempts, err)
	// Output:
	// ONCEGATE_LEASE="60" is malformed; want a Go duration such as 60s, 1m30s or 15m
	// 1m0s 30s 9 <nil>
}
