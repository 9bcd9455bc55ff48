package pull_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/pull"
	"github.com/oncegate/oncegate/runtime/push"
)

// TestBodyPanic: a body that panics does not take the worker down. The
// Receiver recovers the panic, the gate releases the claim, and the message is
// nacked as body-failed: Pub/Sub redelivers it (each delivery runs at a higher
// fence, so the claim was released rather than left to its one-minute lease)
// and, after the subscription's maximum delivery attempts, moves it to the
// dead-letter topic. Messages before and after it are processed and acked by
// the same Receive. Each panic is one error line with the stack and never the
// payload. Every mode: each releases the claim of a body that failed.
func TestBodyPanic(t *testing.T) {
	for _, mode := range []pull.Mode{pull.ModeLock, pull.ModeMutex, pull.ModeDo} {
		t.Run(mode.String(), func(t *testing.T) { testBodyPanic(t, mode) })
	}
}

func testBodyPanic(t *testing.T, mode pull.Mode) {
	ctx := context.Background()
	r := newRig(t, false)
	const maxAttempts = 5
	dead, deadSub := "projects/test/topics/orders-dead", "projects/test/subscriptions/orders-dead"
	if _, err := r.client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: dead}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{Name: deadSub, Topic: dead}); err != nil {
		t.Fatal(err)
	}
	r.sub = "projects/test/subscriptions/orders-pull-dl"
	if _, err := r.client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
		Name: r.sub, Topic: r.topic, AckDeadlineSeconds: 60,
		DeadLetterPolicy: &pubsubpb.DeadLetterPolicy{DeadLetterTopic: dead, MaxDeliveryAttempts: maxAttempts},
	}); err != nil {
		t.Fatal(err)
	}

	var (
		mu     sync.Mutex
		fences []int64 // of the poison message's runs, in order
		good   atomic.Int32
	)
	rc, err := pull.New(r.gate(t, nil), func(_ context.Context, m *push.Message, c gate.Claim) error {
		if m.Attributes["order"] == "poison" {
			mu.Lock()
			fences = append(fences, c.Fence)
			mu.Unlock()
			var orders []string
			_ = orders[len(m.Data)] // a runtime panic (index out of range), as a bug would raise
		}
		good.Add(1)
		return nil
	}, &pull.Options{Mode: mode, KeyFunc: push.AttributeKey("order"), Logger: r.log})
	if err != nil {
		t.Fatal(err)
	}
	stop := r.receive(t, rc)
	before := r.publish("a", map[string]string{"order": "PO-1"})
	poison := r.publish("SECRET-PAYLOAD", map[string]string{"order": "poison"})
	after := r.publish("b", map[string]string{"order": "PO-2"})
	for _, id := range []string{before, after} {
		if !r.settled(t, id) {
			t.Fatalf("message %s beside the poison one was nacked", id)
		}
	}

	// The poison message reaches the dead-letter topic.
	dctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	var deadLettered atomic.Bool
	if err := r.client.Subscriber(deadSub).Receive(dctx, func(_ context.Context, m *pubsub.Message) {
		m.Ack()
		if m.ID == poison {
			deadLettered.Store(true)
			cancel()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if !deadLettered.Load() {
		t.Fatalf("the poison message was not dead-lettered within 45s; its runs' fences: %v", fences)
	}
	later := r.publish("c", map[string]string{"order": "PO-3"})
	if !r.settled(t, later) {
		t.Fatal("a message after the dead-lettering was nacked")
	}
	if err := stop(); err != nil {
		t.Fatalf("Receive: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(fences) < 2 || len(fences) > maxAttempts {
		t.Fatalf("the poison body ran %d times (fences %v), want 2..%d", len(fences), fences, maxAttempts)
	}
	for i := 1; i < len(fences); i++ {
		if fences[i] <= fences[i-1] {
			t.Fatalf("fences %v: a redelivery did not run at a higher fence", fences)
		}
	}
	if _, nacks := r.acks(poison); nacks < len(fences) {
		t.Errorf("poison message nacked %d times for %d runs", nacks, len(fences))
	}
	if n := good.Load(); n != 3 {
		t.Errorf("the other bodies ran %d times, want 3", n)
	}
	logs := r.logs.String()
	if strings.Contains(logs, "SECRET-PAYLOAD") {
		t.Errorf("the payload reached the log:\n%s", logs)
	}
	panics := 0
	for l := range strings.Lines(logs) {
		if strings.Contains(l, `"panic"`) {
			panics++
			for _, w := range []string{`"level":"ERROR"`, `"outcome":"body-failed"`, `"ack":false`, "index out of range", `"stack":"goroutine `, "pull_test.testBodyPanic.func1"} {
				if !strings.Contains(l, w) {
					t.Errorf("panic line lacks %s: %s", w, l)
				}
			}
		}
	}
	if panics != len(fences) {
		t.Errorf("%d panic lines for %d panics:\n%s", panics, len(fences), logs)
	}
}

// TestKeyFuncPanic: a KeyFunc that panics nacks the message without a claim
// (no-key, fail closed) and the Receiver keeps processing other messages.
func TestKeyFuncPanic(t *testing.T) {
	r := newRig(t, false)
	var runs atomic.Int32
	keyOf := push.AttributeKey("order")
	rc, err := pull.New(r.gate(t, nil), func(context.Context, *push.Message, gate.Claim) error { runs.Add(1); return nil },
		&pull.Options{Logger: r.log, KeyFunc: func(m *push.Message) (string, error) {
			if m.Attributes["order"] == "poison" {
				panic("key function bug")
			}
			return keyOf(m)
		}})
	if err != nil {
		t.Fatal(err)
	}
	stop := r.receive(t, rc)
	if id := r.publish("x", map[string]string{"order": "poison"}); r.settled(t, id) {
		t.Fatal("the message whose key function panicked was acked")
	}
	if id := r.publish("y", map[string]string{"order": "PO-1"}); !r.settled(t, id) {
		t.Fatal("the next message was nacked")
	}
	if err := stop(); err != nil {
		t.Fatalf("Receive: %v", err)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("bodies ran %d times, want 1", n)
	}
	line := resultLine(t, r.logs.String(), gate.OutcomeNoKey)
	if line == nil || !strings.Contains(line["msg"].(string), "key function panicked") || !strings.Contains(line["err"].(string), "key function bug") || line["stack"] == nil {
		t.Errorf("no-key line %v, want the panic, its value and the stack", line)
	}
}
