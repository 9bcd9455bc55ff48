package push_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/push"
)

const secret = "SECRET-PAYLOAD-BYTES"

// TestOutcomeMapping drives every row of docs/design.md's ack-policy table through a
// real memgate store and checks the status, the outcome header, the store and
// the log line.
func TestOutcomeMapping(t *testing.T) {
	const id, key = "2070443601311540", "orders:2070443601311540"
	bg := context.Background()
	tests := []struct {
		name    string
		backend func(*memgate.Store) gate.Backend
		setup   func(t *testing.T, e *env)
		body    func(t *testing.T, e *env) push.HandlerFunc
		status  int
		outcome string
		runs    int32
		level   string // level of the adapter's line
		check   func(t *testing.T, e *env)
	}{
		{name: "ran", status: 204, outcome: "ran", runs: 1, level: "INFO",
			check: func(t *testing.T, e *env) {
				if r := e.record(t, key); r.State != gate.StateDone || r.Fence != 1 {
					t.Errorf("record = %s fence %d, want done fence 1", r.State, r.Fence)
				}
			}},
		{name: "duplicate", status: 204, outcome: "duplicate", runs: 0, level: "INFO",
			setup: func(t *testing.T, e *env) {
				if err := e.gate.Lock(bg, id, func(context.Context, gate.Claim) error { return nil }); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "in-progress", status: 503, outcome: "in-progress", runs: 0, level: "WARN",
			setup: func(t *testing.T, e *env) {
				claimOther(t, e, key)
			}},
		{name: "body-failed", status: 500, outcome: "body-failed", runs: 1, level: "ERROR",
			body: func(*testing.T, *env) push.HandlerFunc {
				return func(context.Context, *push.Message, gate.Claim) error { return errors.New("supplier said 502") }
			},
			check: func(t *testing.T, e *env) {
				// Released: fence+1 and claimable at once.
				if r := e.record(t, key); r.State != gate.StateClaimed || r.Fence != 2 || r.LeaseLive(e.clock.Now()) {
					t.Errorf("record = %+v, want a released claim with fence 2", r)
				}
			}},
		{name: "permanent", status: 204, outcome: "permanent", runs: 1, level: "ERROR",
			body: func(*testing.T, *env) push.HandlerFunc {
				return func(context.Context, *push.Message, gate.Claim) error {
					return gate.Permanent(errors.New("order cancelled"))
				}
			},
			check: func(t *testing.T, e *env) {
				if r := e.record(t, key); r.State != gate.StateFailed {
					t.Errorf("state = %s, want failed", r.State)
				}
			}},
		{name: "not-recorded", status: 204, outcome: "not-recorded", runs: 1, level: "ERROR",
			backend: func(s *memgate.Store) gate.Backend { return &faulty{Store: s, completeErr: errStore} },
			check: func(t *testing.T, e *env) {
				if r := e.record(t, key); r.State != gate.StateUnknown {
					t.Errorf("state = %s, want unknown (best effort)", r.State)
				}
			}},
		{name: "fenced-out", status: 204, outcome: "fenced-out", runs: 1, level: "ERROR",
			body: func(t *testing.T, e *env) push.HandlerFunc {
				return func(ctx context.Context, _ *push.Message, c gate.Claim) error {
					// The lease lapses mid-body and another holder reclaims the key.
					e.clock.Advance(2 * time.Minute)
					claimOther(t, e, key)
					return nil
				}
			},
			check: func(t *testing.T, e *env) {
				line := e.logs.Lines(t, "ERROR")
				if len(line) == 0 || line[len(line)-1]["alert"] != true {
					t.Errorf("fenced-out line lacks alert=true: %v", line)
				}
			}},
		{name: "unknown", status: 503, outcome: "unknown", runs: 0, level: "ERROR",
			setup: func(t *testing.T, e *env) {
				r := claimOther(t, e, key)
				if ok, err := e.store.MarkUnknown(bg, key, r.Fence); !ok || err != nil {
					t.Fatal(ok, err)
				}
			},
			check: func(t *testing.T, e *env) {
				if !strings.Contains(e.logs.String(), `reconcile key \"orders:2070443601311540\"`) {
					t.Errorf("no reconcile line in %s", e.logs)
				}
			}},
		{name: "store-unavailable", status: 503, outcome: "store-unavailable", runs: 0, level: "ERROR",
			backend: func(s *memgate.Store) gate.Backend { return &faulty{Store: s, claimErr: errStore} }},
		{name: "rejected: fence exhausted", status: 409, outcome: "rejected", runs: 0, level: "ERROR",
			setup: func(t *testing.T, e *env) {
				if _, err := e.store.AdvanceFence(bg, key, gate.MaxFence, time.Hour); err != nil {
					t.Fatal(err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.backend, &gate.Options{Lease: time.Minute})
			if tt.setup != nil {
				tt.setup(t, e)
			}
			var runs atomic.Int32
			var inner push.HandlerFunc = func(context.Context, *push.Message, gate.Claim) error { return nil }
			if tt.body != nil {
				inner = tt.body(t, e)
			}
			h, err := push.NewHandler(e.gate, func(ctx context.Context, m *push.Message, c gate.Claim) error {
				runs.Add(1)
				return inner(ctx, m, c)
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			before := len(e.logs.Lines(t, ""))
			res := post(t, h, envelope(id, []byte(secret), 4), nil)
			if res.StatusCode != tt.status || res.Header.Get(push.HeaderOutcome) != tt.outcome {
				t.Fatalf("got %d %q, want %d %q", res.StatusCode, res.Header.Get(push.HeaderOutcome), tt.status, tt.outcome)
			}
			if runs.Load() != tt.runs {
				t.Errorf("body ran %d times, want %d", runs.Load(), tt.runs)
			}
			lines := e.logs.Lines(t, "")[before:]
			var mine []map[string]any
			for _, l := range lines {
				if l["adapter"] == "push" {
					mine = append(mine, l)
				}
			}
			if len(mine) != 1 {
				t.Fatalf("adapter logged %d lines, want 1: %v", len(mine), mine)
			}
			l := mine[0]
			if l["level"] != tt.level || l["key"] != key || l["outcome"] != tt.outcome || l["delivery_attempt"] != 4.0 || l["message_id"] != id {
				t.Errorf("log line = %v", l)
			}
			if strings.Contains(e.logs.String(), secret) {
				t.Errorf("payload bytes logged: %s", e.logs)
			}
			if tt.check != nil {
				tt.check(t, e)
			}
		})
	}
}

// claimOther claims key directly in the store as another holder.
func claimOther(t *testing.T, e *env, key string) gate.Record {
	t.Helper()
	res, err := e.store.Claim(context.Background(), gate.ClaimRequest{
		Key: key, Token: "other-token", Owner: "other/2", Lease: time.Minute, TTL: time.Hour,
	})
	if err != nil || res.Status != gate.Won {
		t.Fatalf("claim as other: %v %v", res.Status, err)
	}
	return res.Record
}

// TestInProgressLogsOneWarningLine checks the in-progress answer: exactly one
// warning line in the whole log (gate and adapter share the logger), with the key
// and the delivery attempt, and no stack trace.
func TestInProgressLogsOneWarningLine(t *testing.T) {
	for _, attempt := range []int{0, 7} {
		e := newEnv(t, nil, nil)
		claimOther(t, e, "orders:m1")
		h, err := push.NewHandler(e.gate, func(context.Context, *push.Message, gate.Claim) error { return nil }, nil)
		if err != nil {
			t.Fatal(err)
		}
		res := post(t, h, envelope("m1", nil, attempt), nil)
		if res.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("status %d", res.StatusCode)
		}
		all := e.logs.Lines(t, "")
		warn := e.logs.Lines(t, "WARN")
		if len(all) != 1 || len(warn) != 1 {
			t.Fatalf("want exactly one line, a warning; got %v", all)
		}
		w := warn[0]
		if w["key"] != "orders:m1" || w["delivery_attempt"] != float64(attempt) {
			t.Errorf("line = %v", w)
		}
		if s := e.logs.String(); strings.Contains(s, "goroutine") || strings.Contains(s, ".go:") {
			t.Errorf("stack trace in %s", s)
		}
	}
}

// TestDuplicateConcurrent sends the same message many times at once: the body
// runs exactly once and every answer is an ack or a 503 (retry).
func TestDuplicateConcurrent(t *testing.T) {
	e := newEnv(t, nil, nil)
	var runs atomic.Int32
	release := make(chan struct{})
	h, err := push.NewHandler(e.gate, func(context.Context, *push.Message, gate.Claim) error {
		runs.Add(1)
		<-release
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	codes := make(chan int, n)
	for range n {
		go func() { codes <- post(t, h, envelope("dup", []byte("x"), 1), nil).StatusCode }()
	}
	// All but the winner answer 503 while it runs.
	for range n - 1 {
		if c := <-codes; c != http.StatusServiceUnavailable {
			t.Errorf("concurrent duplicate answered %d, want 503", c)
		}
	}
	close(release)
	if c := <-codes; c != http.StatusNoContent {
		t.Errorf("winner answered %d", c)
	}
	if c := post(t, h, envelope("dup", []byte("x"), 2), nil).StatusCode; c != http.StatusNoContent {
		t.Errorf("redelivery answered %d", c)
	}
	if runs.Load() != 1 {
		t.Errorf("body ran %d times, want 1", runs.Load())
	}
}

// TestMutexMode runs every delivery of a key, with growing fences.
func TestMutexMode(t *testing.T) {
	e := newEnv(t, nil, nil)
	var fences []int64
	h, err := push.NewHandler(e.gate, func(_ context.Context, _ *push.Message, c gate.Claim) error {
		fences = append(fences, c.Fence)
		return nil
	}, &push.Options{AdapterOptions: push.AdapterOptions{Mode: push.ModeMutex}, KeyFunc: func(m *push.Message) (string, error) {
		return m.Attributes["account"], nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		body := []byte(`{"message":{"messageId":"` + id + `","attributes":{"account":"acct-9"}}}`)
		if res := post(t, h, body, nil); res.StatusCode != http.StatusNoContent {
			t.Fatalf("%s: status %d", id, res.StatusCode)
		}
	}
	if len(fences) != 3 || fences[0] >= fences[1] || fences[1] >= fences[2] {
		t.Errorf("fences = %v, want three growing fences", fences)
	}
	if r := e.record(t, "orders:acct-9"); r.State != gate.StateClaimed {
		t.Errorf("mutex left state %s, want claimed (released)", r.State)
	}
}

// TestBodyContext checks the work runs under the gateway's own deadline and
// keeps running when the push client goes away.
func TestBodyContext(t *testing.T) {
	e := newEnv(t, nil, &gate.Options{Lease: time.Minute, WorkDeadline: 30 * time.Second})
	var deadline time.Time
	var cancelled bool
	h, err := push.NewHandler(e.gate, func(ctx context.Context, _ *push.Message, _ gate.Claim) error {
		deadline, _ = ctx.Deadline()
		cancelled = ctx.Err() != nil
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the client is already gone
	req := newRequest(envelope("ctx", nil, 0)).WithContext(ctx)
	rec := newRecorder()
	h.ServeHTTP(rec, req)
	if rec.Result().StatusCode != http.StatusNoContent || cancelled {
		t.Fatalf("status %d, body ctx cancelled %v", rec.Result().StatusCode, cancelled)
	}
	if d := time.Until(deadline); d <= 0 || d > 30*time.Second {
		t.Errorf("body deadline in %s, want within the 30s work deadline", d)
	}
}

func TestMethodNotAllowed(t *testing.T) {
	e := newEnv(t, nil, nil)
	h, _ := push.NewHandler(e.gate, func(context.Context, *push.Message, gate.Claim) error { return nil }, nil)
	req := newRequest(nil)
	req.Method = http.MethodGet
	rec := newRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "POST" {
		t.Errorf("got %d allow %q body %q", res.StatusCode, res.Header.Get("Allow"), b)
	}
}

func TestNewHandlerValidates(t *testing.T) {
	e := newEnv(t, nil, nil)
	fn := func(context.Context, *push.Message, gate.Claim) error { return nil }
	for name, tc := range map[string]struct {
		g    *gate.Gate
		fn   push.HandlerFunc
		opts *push.Options
		want string
	}{
		"nil gate":      {nil, fn, nil, "gate is nil"},
		"nil fn":        {e.gate, nil, nil, "handler func is nil"},
		"bad mode":      {e.gate, fn, &push.Options{AdapterOptions: push.AdapterOptions{Mode: 7}}, "Mode"},
		"bad envelope":  {e.gate, fn, &push.Options{Envelope: 9}, "Envelope"},
		"negative size": {e.gate, fn, &push.Options{MaxDataBytes: -1}, "MaxDataBytes"},
		"oidc audience": {e.gate, fn, &push.Options{AdapterOptions: push.AdapterOptions{OIDC: &push.OIDCConfig{ServiceAccountEmail: "a@b"}}}, "Audience"},
		"oidc email":    {e.gate, fn, &push.Options{AdapterOptions: push.AdapterOptions{OIDC: &push.OIDCConfig{Audience: "https://x"}}}, "ServiceAccountEmail"},
	} {
		if _, err := push.NewHandler(tc.g, tc.fn, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to name %q", name, err, tc.want)
		}
	}
}
