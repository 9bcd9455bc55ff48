package pull_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/grpc/codes"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/pull"
	"github.com/oncegate/oncegate/runtime/push"
)

// TestShutdownLetsRunningBodyFinish: when Receive's context ends (SIGTERM), a
// body already running keeps its context, finishes within the drain, and its
// message is acked; Receive returns only after it did.
func TestShutdownLetsRunningBodyFinish(t *testing.T) {
	r := newRig(t, false)
	started, release := make(chan struct{}), make(chan struct{})
	var bodyErr error
	rc, err := pull.New(r.gate(t, nil), func(ctx context.Context, _ *push.Message, _ gate.Claim) error {
		close(started)
		<-release
		bodyErr = ctx.Err()
		return nil
	}, &pull.Options{Drain: time.Hour, Logger: r.log})
	if err != nil {
		t.Fatal(err)
	}
	stop := r.receive(t, rc)
	id := r.publish("a", nil)
	<-started
	returned := make(chan error, 1)
	go func() { returned <- stop() }()
	if !waitFor(func() bool { return contains(r.logs.String(), "pull stopping") }) {
		t.Fatal("Receive did not log that it is stopping")
	}
	select {
	case err := <-returned:
		t.Fatalf("Receive returned (%v) while a body was still running", err)
	default:
	}
	close(release)
	if err := <-returned; err != nil {
		t.Fatal(err)
	}
	if bodyErr != nil {
		t.Fatalf("the body's context was cancelled within the drain: %v", bodyErr)
	}
	if acks, nacks := r.acks(id); acks != 1 || nacks != 0 {
		t.Fatalf("acks %d, nacks %d; want the finished body's message acked once", acks, nacks)
	}
}

// TestShutdownCutsBodyAfterDrain: a body still running when the drain is over
// sees its context cancelled with ErrShutdown; its message is nacked, never
// acked, and its claim released so a redelivery can run it.
func TestShutdownCutsBodyAfterDrain(t *testing.T) {
	r := newRig(t, false)
	started := make(chan struct{})
	var cause error
	rc, err := pull.New(r.gate(t, nil), func(ctx context.Context, _ *push.Message, _ gate.Claim) error {
		close(started)
		<-ctx.Done()
		cause = context.Cause(ctx)
		return ctx.Err()
	}, &pull.Options{Drain: 10 * time.Millisecond, Logger: r.log})
	if err != nil {
		t.Fatal(err)
	}
	stop := r.receive(t, rc)
	id := r.publish("a", nil)
	<-started
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(cause, pull.ErrShutdown) {
		t.Fatalf("body's context cause = %v, want ErrShutdown", cause)
	}
	if acks, nacks := r.acks(id); acks != 0 || nacks != 1 {
		t.Fatalf("acks %d, nacks %d; want the unfinished body's message nacked, never acked", acks, nacks)
	}
	rec, ok, err := r.store.Inspect(context.Background(), "ns:"+id)
	if err != nil || !ok || rec.State != gate.StateClaimed || rec.LeaseExpiry.After(time.Now()) {
		t.Fatalf("record %+v (found %v, %v); want the claim released (lease expired)", rec, ok, err)
	}
}

// TestStoppingNacksWithoutClaim: a message handed to the callback after
// receiving stopped is nacked without a claim.
func TestStoppingNacksWithoutClaim(t *testing.T) {
	r := newRig(t, false)
	var runs int
	rc, err := pull.New(r.gate(t, nil), func(context.Context, *push.Message, gate.Claim) error { runs++; return nil },
		&pull.Options{Logger: r.log})
	if err != nil {
		t.Fatal(err)
	}
	id := r.publish("a", nil)
	ctx, cancel := context.WithCancel(context.Background())
	err = r.client.Subscriber(r.sub).Receive(ctx, func(cctx context.Context, m *pubsub.Message) {
		cancel()
		<-cctx.Done()
		rc.Handle(cctx, m)
	})
	if err != nil {
		t.Fatal(err)
	}
	if acks, nacks := r.acks(id); runs != 0 || acks != 0 || nacks != 1 {
		t.Fatalf("runs %d, acks %d, nacks %d; want a nack without running", runs, acks, nacks)
	}
	if _, ok, _ := r.store.Inspect(context.Background(), "ns:"+id); ok {
		t.Fatal("a record was claimed while stopping")
	}
	if !contains(r.logs.String(), "received while stopping") {
		t.Fatalf("log lacks the stopping line:\n%s", r.logs)
	}
}

// TestExactlyOnceFailedAck: on an exactly-once subscription whose ack fails
// (the server refuses it), the Receiver waits for the ack result and logs the
// failure as one the gate's record makes harmless; the body ran once and the
// record is done, so the redelivery is a duplicate.
func TestExactlyOnceFailedAck(t *testing.T) {
	r := newRig(t, true, pstest.WithErrorInjection("Acknowledge", codes.PermissionDenied, "no pubsub.subscriber role"))
	var runs int
	rc, err := pull.New(r.gate(t, nil), func(context.Context, *push.Message, gate.Claim) error { runs++; return nil },
		&pull.Options{Logger: r.log, AckTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stop := r.receive(t, rc)
	id := r.publish("a", nil)
	if !waitFor(func() bool { return contains(r.logs.String(), "ack failed") }) {
		t.Fatalf("no failed-ack line:\n%s", r.logs)
	}
	_ = stop()
	for _, want := range []string{`"ack_status":"permission-denied"`, "makes it a duplicate"} {
		if !contains(r.logs.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, r.logs)
		}
	}
	rec, ok, err := r.store.Inspect(context.Background(), "ns:"+id)
	if err != nil || !ok || rec.State != gate.StateDone || runs != 1 {
		t.Fatalf("record %+v (found %v, %v), runs %d; want done after one run", rec, ok, err, runs)
	}
}

// waitFor polls cond for up to 30s.
func waitFor(cond func() bool) bool {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond) // polling another goroutine's output
	}
	return false
}
