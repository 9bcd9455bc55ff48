package e2e_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/oncegate/oncegate/internal/localpubsub"
	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/sizing"
)

// failingEndpoint answers every push 503 and records when each arrived, per
// message id.
type failingEndpoint struct {
	mu    sync.Mutex
	times map[string][]time.Time
}

func (e *failingEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, _, _ := readPush(r)
	e.mu.Lock()
	e.times[p.MessageID] = append(e.times[p.MessageID], time.Now())
	e.mu.Unlock()
	w.WriteHeader(http.StatusServiceUnavailable)
}

func (e *failingEndpoint) snapshot() map[string][]time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string][]time.Time{}
	for k, v := range e.times {
		out[k] = append([]time.Time(nil), v...)
	}
	return out
}

// policyWorld is a topology on the emulator whose push subscription (the
// components' settings for plan, with attempts) points at a failing
// endpoint.
type policyWorld struct {
	ps   *localpubsub.Fake
	topo localpubsub.Topology
	ep   *failingEndpoint
}

// policyAttempts is the policy tests' max delivery attempts: Pub/Sub's
// minimum, the sizing proof's control.
const policyAttempts = sizing.DeliveryAttemptsMin

// startPolicyWorld builds a policyWorld with the sizing proof's plan and
// policyAttempts, and publishes n messages to it in one request.
func startPolicyWorld(t *testing.T, n int) (*policyWorld, sizing.Plan) {
	t.Helper()
	plan := sizingProofPlan()
	pw := newPolicyWorld(t, plan, policyAttempts)
	pw.publish(t, n)
	return pw, plan
}

func newPolicyWorld(t *testing.T, plan sizing.Plan, attempts int) *policyWorld {
	t.Helper()
	ctx := t.Context()
	ps, err := dialEmulator(ctx, testenv.PubSubEmulator(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ps.Client.Close() })
	pw := &policyWorld{ps: ps, topo: ps.Names(testenv.UniqueName(t, "policy")), ep: &failingEndpoint{times: map[string][]time.Time{}}}
	srv := httptest.NewServer(pw.ep)
	t.Cleanup(srv.Close)
	if err := createTopics(ctx, ps, pw.topo); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.Client.SubscriptionAdminClient.CreateSubscription(ctx, pushSubscription(plan, attempts, pw.topo, srv.URL+"/", true)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Stop the push loops before the endpoint closes.
		c := context.WithoutCancel(ctx)
		_ = ps.Client.SubscriptionAdminClient.DeleteSubscription(c, &pubsubpb.DeleteSubscriptionRequest{Subscription: pw.topo.Subscription})
	})
	return pw
}

// publish publishes n messages in one request and returns their ids.
func (pw *policyWorld) publish(t *testing.T, n int) []string {
	t.Helper()
	var ms []*pubsubpb.PubsubMessage
	for i := range n {
		ms = append(ms, &pubsubpb.PubsubMessage{Data: []byte("{}"), Attributes: map[string]string{attrPublished: strconv.Itoa(i)}})
	}
	r, err := pw.ps.Client.TopicAdminClient.Publish(t.Context(), &pubsubpb.PublishRequest{Topic: pw.topo.Topic, Messages: ms})
	if err != nil {
		t.Fatal(err)
	}
	return r.GetMessageIds()
}

// waitDeadLetters drains the dead-letter subscription until want letters
// arrived, timeout passed or giveUp (when not nil) says so, and returns them
// by attrPublished.
func (pw *policyWorld) waitDeadLetters(t *testing.T, want int, timeout time.Duration, giveUp func() bool) map[string]*pubsubpb.PubsubMessage {
	t.Helper()
	got := map[string]*pubsubpb.PubsubMessage{}
	for deadline := time.Now().Add(timeout); len(got) < want && time.Now().Before(deadline) && (giveUp == nil || !giveUp()); {
		ms, err := pw.ps.DrainDeadLetters(t.Context(), pw.topo)
		if err != nil {
			t.Logf("drain dead letters: %v", err)
		}
		for _, m := range ms {
			got[m.GetAttributes()[attrPublished]] = m
		}
		time.Sleep(200 * time.Millisecond)
	}
	return got
}

// TestEmulatorRetryPolicy pins what the sizing proof relies on in the
// emulator's retry and dead-letter policies, with the components'
// subscription for the proof's plan and Pub/Sub's minimum of 5 attempts: a
// message its endpoint always refuses is pushed exactly 5 times, never two
// pushes closer than the minimum backoff (the conservative model's delay),
// and all 5 well inside the plan's 20 s lease (so the control's 5 attempts
// cannot outlast it); then it is on the dead-letter subscription with its
// delivery count.
func TestEmulatorRetryPolicy(t *testing.T) {
	t.Parallel()
	pw, plan := startPolicyWorld(t, 1)
	const attempts = policyAttempts
	dls := pw.waitDeadLetters(t, 1, 45*time.Second, nil)
	dl := dls["0"]
	if dl == nil {
		t.Fatalf("no dead letter after 45 s; pushes %v", pw.ep.snapshot())
	}
	if got := dl.GetAttributes()[attrDeadLetterCount]; got != strconv.Itoa(attempts) {
		t.Errorf("dead letter %s=%q, want %d", attrDeadLetterCount, got, attempts)
	}
	var times []time.Time
	for _, ts := range pw.ep.snapshot() {
		times = ts
	}
	if len(times) != attempts {
		t.Fatalf("%d pushes, want exactly %d", len(times), attempts)
	}
	var gaps []time.Duration
	for i := 1; i < len(times); i++ {
		gap := times[i].Sub(times[i-1])
		gaps = append(gaps, gap.Round(10*time.Millisecond))
		// The emulator keeps time in milliseconds.
		if gap < plan.MinBackoff-5*time.Millisecond {
			t.Errorf("push %d came %s after push %d, sooner than the %s minimum backoff", i+1, gap, i, plan.MinBackoff)
		}
	}
	if span := times[len(times)-1].Sub(times[0]); span >= plan.Lease {
		t.Errorf("the %d pushes spanned %s, not inside the %s lease: the sizing proof's control would not dead-letter", attempts, span, plan.Lease)
	}
	t.Logf("gaps between the %d pushes: %v", attempts, gaps)
}

// TestEmulatorRetryPolicyStall reproduces the emulator bug that keeps the
// retry policy out of the emulator storm (tests/doc.go): three messages
// nacked together are scheduled for redelivery in one millisecond, and the
// emulator's redelivery task then fails and never runs again, so after a few
// pushes each the subscription goes quiet and nothing is dead-lettered. The
// test skips, naming the bug, while it is present; when all three are
// dead-lettered it passes, and the storm can run with its retry policy.
func TestEmulatorRetryPolicyStall(t *testing.T) {
	t.Parallel()
	pw, _ := startPolicyWorld(t, 3)
	// Healthy, the three are dead-lettered in about 13 s (see
	// TestEmulatorRetryPolicy), and no gap between pushes exceeds about 3 s.
	const quiet = 8 * time.Second
	var pushes int
	var last time.Time
	count := func() bool {
		pushes, last = 0, time.Time{}
		for _, ts := range pw.ep.snapshot() {
			pushes += len(ts)
			if ts[len(ts)-1].After(last) {
				last = ts[len(ts)-1]
			}
		}
		return pushes > 0 && time.Since(last) > quiet
	}
	dls := pw.waitDeadLetters(t, 3, 30*time.Second, count)
	count()
	switch {
	case len(dls) == 3:
		t.Logf("no stall: the 3 messages were dead-lettered after %d pushes; the storm on the emulator could keep its retry policy", pushes)
	case time.Since(last) > quiet:
		t.Skipf("emulator retry-policy stall present: %d of 3 dead-lettered, %d pushes, none in the last %s (tests/doc.go)",
			len(dls), pushes, time.Since(last).Round(time.Second))
	default:
		t.Errorf("the 3 messages neither stalled nor were dead-lettered within 30 s: %d dead letters, %d pushes, the last %s ago",
			len(dls), pushes, time.Since(last).Round(time.Second))
	}
}
