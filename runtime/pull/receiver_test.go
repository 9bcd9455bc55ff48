package pull_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/pull"
	"github.com/oncegate/oncegate/runtime/push"
)

// TestAckTable checks pull against gate's ack table (docs/design.md): each
// outcome acks or nacks the pulled message as gate.Outcome.Ack says, logs its
// line at gate.Outcome.LogLevel, runs the body only when the claim was won, and
// leaves the record in the state the verb leaves it.
func TestAckTable(t *testing.T) {
	bad := errors.New("supplier said 500")
	cases := []struct {
		name    string
		attrs   map[string]string
		backend func(r *rig) gate.Backend
		prepare func(t *testing.T, r *rig, key string) // before Receive starts
		body    error
		wantRun int          // runs; a nacked body-failed message may be redelivered and run again
		outcome gate.Outcome // acks and logs as the table says
		wantLog string
		state   gate.State // want the record's state; "" means no record
	}{
		{name: "ran", wantRun: 1, outcome: gate.OutcomeRan, state: gate.StateDone, wantLog: "oncegate: ran; acked"},
		{name: "duplicate", prepare: done, wantRun: 0, outcome: gate.OutcomeDuplicate, state: gate.StateDone, wantLog: "duplicate skipped"},
		{name: "in progress", prepare: held, wantRun: 0, outcome: gate.OutcomeInProgress, state: gate.StateClaimed, wantLog: "in progress elsewhere"},
		{name: "body failed", body: bad, wantRun: 1, outcome: gate.OutcomeBodyFailed, state: gate.StateClaimed, wantLog: "body failed; nacked"},
		{name: "permanent", body: gate.Permanent(bad), wantRun: 1, outcome: gate.OutcomePermanent, state: gate.StateFailed, wantLog: "failed permanently"},
		{name: "unknown", prepare: unknown, wantRun: 0, outcome: gate.OutcomeUnknown, state: gate.StateUnknown, wantLog: "reconcile key"},
		{name: "store unavailable", backend: func(r *rig) gate.Backend { return down{r.store} }, wantRun: 0, outcome: gate.OutcomeStoreUnavailable, wantLog: "store unavailable"},
		{name: "not recorded", backend: func(r *rig) gate.Backend { return lostComplete{r.store} }, wantRun: 1, outcome: gate.OutcomeNotRecorded, state: gate.StateUnknown, wantLog: "never repeated"},
		{name: "no key", attrs: map[string]string{"other": "x"}, wantRun: 0, outcome: gate.OutcomeNoKey, wantLog: "no key resolvable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, false)
			var b gate.Backend
			if tc.backend != nil {
				b = tc.backend(r)
			}
			g := r.gate(t, b)
			attrs := tc.attrs
			if attrs == nil {
				attrs = map[string]string{"order": "PO-1"}
			}
			id := r.publish(`{"sku":1}`, attrs)
			if tc.prepare != nil {
				tc.prepare(t, r, "ns:PO-1")
			}
			var runs atomic.Int32
			rc, err := pull.New(g, func(ctx context.Context, m *push.Message, c gate.Claim) error {
				runs.Add(1)
				if m.MessageID != id || string(m.Data) != `{"sku":1}` || c.Key != "ns:PO-1" || c.Fence < 1 {
					t.Errorf("body saw id %q data %q key %q fence %d", m.MessageID, m.Data, c.Key, c.Fence)
				}
				return tc.body
			}, &pull.Options{KeyFunc: push.AttributeKey("order"), Logger: r.log})
			if err != nil {
				t.Fatal(err)
			}
			stop := r.receive(t, rc)
			acked := r.settled(t, id)
			if err := stop(); err != nil {
				t.Fatalf("Receive: %v", err)
			}
			if acked != tc.outcome.Ack() {
				t.Errorf("acked = %v, want %v (%s)", acked, tc.outcome.Ack(), tc.outcome)
			}
			if n := int(runs.Load()); n != tc.wantRun && !(tc.body != nil && !tc.outcome.Ack() && n > tc.wantRun) {
				t.Errorf("body ran %d times, want %d", n, tc.wantRun)
			}
			rec, ok, err := r.store.Inspect(context.Background(), "ns:PO-1")
			switch {
			case err != nil:
				t.Fatal(err)
			case tc.state == "" && ok:
				t.Errorf("a record was written: %+v", rec)
			case tc.state != "" && (!ok || rec.State != tc.state):
				t.Errorf("record %+v (found %v), want state %s", rec, ok, tc.state)
			}
			line := resultLine(t, r.logs.String(), tc.outcome)
			if line == nil {
				t.Fatalf("no line with outcome %q:\n%s", tc.outcome, r.logs)
			}
			if line["level"] != tc.outcome.LogLevel().String() || line["ack"] != tc.outcome.Ack() {
				t.Errorf("%s line: level %v ack %v, want the table's %s and %v", tc.outcome, line["level"], line["ack"], tc.outcome.LogLevel(), tc.outcome.Ack())
			}
			if msg, _ := line["msg"].(string); !contains(msg, tc.wantLog) {
				t.Errorf("%s line says %q, want it to contain %q", tc.outcome, msg, tc.wantLog)
			}
		})
	}
}

// resultLine returns the first JSON log line in logs whose outcome is o, or nil.
func resultLine(t *testing.T, logs string, o gate.Outcome) map[string]any {
	t.Helper()
	for l := range strings.Lines(logs) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if m["outcome"] == o.String() && m["ack"] != nil {
			return m
		}
	}
	return nil
}

// done records key done, as a finished earlier delivery would.
func done(t *testing.T, r *rig, key string) {
	t.Helper()
	res := claim(t, r, key)
	if ok, err := r.store.Complete(context.Background(), gate.Completion{Key: key, Fence: res.Record.Fence, TTL: time.Hour}); err != nil || !ok {
		t.Fatalf("complete: %v %v", ok, err)
	}
}

// held leaves a live claim by another holder.
func held(t *testing.T, r *rig, key string) { t.Helper(); claim(t, r, key) }

// unknown leaves the record unknown, as a lost completion would.
func unknown(t *testing.T, r *rig, key string) {
	t.Helper()
	res := claim(t, r, key)
	if ok, err := r.store.MarkUnknown(context.Background(), key, res.Record.Fence); err != nil || !ok {
		t.Fatalf("mark unknown: %v %v", ok, err)
	}
}

func claim(t *testing.T, r *rig, key string) gate.ClaimResult {
	t.Helper()
	res, err := r.store.Claim(context.Background(), gate.ClaimRequest{Key: key, Token: "other", Owner: "other", Lease: time.Hour, TTL: time.Hour})
	if err != nil || res.Status != gate.Won {
		t.Fatalf("claim: %+v %v", res, err)
	}
	return res
}

// TestBusinessKeyRepublish: a message republished under a new message id with
// the same business key runs once; both copies are acked.
func TestBusinessKeyRepublish(t *testing.T) {
	r := newRig(t, false)
	g := r.gate(t, nil)
	var runs atomic.Int32
	rc, err := pull.New(g, func(context.Context, *push.Message, gate.Claim) error { runs.Add(1); return nil },
		&pull.Options{KeyFunc: push.AttributeKey("order"), Logger: r.log})
	if err != nil {
		t.Fatal(err)
	}
	stop := r.receive(t, rc)
	first := r.publish("a", map[string]string{"order": "PO-7"})
	if !r.settled(t, first) {
		t.Fatal("first copy nacked")
	}
	second := r.publish("a", map[string]string{"order": "PO-7"})
	if !r.settled(t, second) {
		t.Fatal("republished copy nacked")
	}
	_ = stop()
	if n := runs.Load(); n != 1 {
		t.Fatalf("body ran %d times for one business key, want 1", n)
	}
}

// TestModes: Mutex runs every delivery of a key; Do with a fingerprint refuses
// the key with other data (nacked, so the dead-letter topic keeps it).
func TestModes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		o        pull.Options
		second   string // data of the second message, same key
		wantRuns int32
		wantAck2 bool
	}{
		{name: "lock", o: pull.Options{Mode: pull.ModeLock}, second: "a", wantRuns: 1, wantAck2: true},
		{name: "mutex", o: pull.Options{Mode: pull.ModeMutex}, second: "a", wantRuns: 2, wantAck2: true},
		{name: "do same data", o: pull.Options{Mode: pull.ModeDo, Fingerprint: true}, second: "a", wantRuns: 1, wantAck2: true},
		{name: "do other data", o: pull.Options{Mode: pull.ModeDo, Fingerprint: true}, second: "b", wantRuns: 1, wantAck2: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, false)
			var runs atomic.Int32
			o := tc.o
			o.KeyFunc, o.Logger = push.AttributeKey("order"), r.log
			rc, err := pull.New(r.gate(t, nil), func(context.Context, *push.Message, gate.Claim) error { runs.Add(1); return nil }, &o)
			if err != nil {
				t.Fatal(err)
			}
			stop := r.receive(t, rc)
			if id := r.publish("a", map[string]string{"order": "K"}); !r.settled(t, id) {
				t.Fatal("first message nacked")
			}
			if id := r.publish(tc.second, map[string]string{"order": "K"}); r.settled(t, id) != tc.wantAck2 {
				t.Fatalf("second message acked = %v, want %v", !tc.wantAck2, tc.wantAck2)
			}
			_ = stop()
			if n := runs.Load(); n != tc.wantRuns {
				t.Fatalf("body ran %d times, want %d", n, tc.wantRuns)
			}
		})
	}
}

// TestNewRefusesBadOptions: every invalid option is refused naming the field.
func TestNewRefusesBadOptions(t *testing.T) {
	r := newRig(t, false)
	g := r.gate(t, nil)
	fn := func(context.Context, *push.Message, gate.Claim) error { return nil }
	for _, tc := range []struct {
		o    pull.Options
		want string
	}{
		{pull.Options{Mode: 7}, "pull.Options.Mode"},
		{pull.Options{Wait: time.Second}, "pull.Options.Wait"},
		{pull.Options{Fingerprint: true}, "pull.Options.Fingerprint"},
		{pull.Options{Drain: -time.Second}, "pull.Options.Drain"},
		{pull.Options{AckTimeout: -time.Second}, "pull.Options.AckTimeout"},
	} {
		if _, err := pull.New(g, fn, &tc.o); err == nil || !contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error naming %s", tc.o, err, tc.want)
		}
	}
	if _, err := pull.New(nil, fn, nil); err == nil {
		t.Error("New with a nil gate succeeded")
	}
	if _, err := pull.New(g, nil, nil); err == nil {
		t.Error("New with a nil func succeeded")
	}
}
