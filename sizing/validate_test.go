package sizing

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

const (
	ns = time.Nanosecond
	s  = time.Second
	m  = time.Minute
)

// base is a safe plan: a 60 s lease renewed every 20 s around 60 s of work.
// Resolved: store timeout 2s, ack deadline 66s (the time budget), W =
// 60s+20s+60s = 140s, required attempts 17, horizon 17×66s + 16×600s =
// 2h58m42s, so a TTL of 3h.
func base() Plan { return Plan{Lease: 60 * s, Heartbeat: 20 * s, WorkDeadline: 60 * s} }

func with(f func(*Plan)) Plan {
	p := base()
	f(&p)
	return p
}

func TestValidateBoundaries(t *testing.T) {
	tests := []struct {
		name   string
		plan   Plan
		fields []string // fields at fault, in order; nil means valid
		msg    string   // substring of the error, when set
	}{
		{"base", base(), nil, ""},
		{"unrenewed 15m lease at 10s backoff (design example)", Plan{Lease: 15 * m, WorkDeadline: 9 * m}, nil, ""},

		// Required fields and signs.
		{"lease zero", with(func(p *Plan) { p.Lease = 0 }), []string{"Lease"}, "Lease must be set (got 0s)"},
		{"work deadline zero", with(func(p *Plan) { p.WorkDeadline = 0 }), []string{"WorkDeadline"}, "Work deadline must be set (got 0s)"},
		{"lease negative", with(func(p *Plan) { p.Lease = -s }), []string{"Lease"}, "Lease must be positive (got -1s)"},
		{"ttl negative", with(func(p *Plan) { p.TTL = -s }), []string{"TTL"}, "TTL must not be negative (got -1s); use a positive duration or zero for the default"},
		{"heartbeat negative", with(func(p *Plan) { p.Heartbeat = -s }), []string{"Heartbeat"}, "zero for no heartbeat"},
		{"grace negative", with(func(p *Plan) { p.ShutdownGrace = -s }), []string{"ShutdownGrace"}, ""},
		{"attempts negative", with(func(p *Plan) { p.MaxDeliveryAttempts = -1 }), []string{"MaxDeliveryAttempts"}, "must not be negative (got -1)"},

		// Ack deadline 10s–600s, whole seconds.
		{"ack 9s", Plan{Lease: 60 * s, WorkDeadline: 9 * s, AckDeadline: 9 * s}, []string{"AckDeadline"},
			"Subscription ack deadline must be 10s–600s (got 9s); raise it or leave zero for the default"},
		{"ack 10s", Plan{Lease: 60 * s, WorkDeadline: 4 * s, AckDeadline: 10 * s}, nil, ""},
		{"ack 600s", with(func(p *Plan) { p.AckDeadline = 600 * s }), nil, ""},
		{"ack 601s", with(func(p *Plan) { p.AckDeadline = 601 * s }), []string{"AckDeadline"}, "(got 10m1s = 601s); lower it"},
		{"ack fractional", with(func(p *Plan) { p.AckDeadline = 60*s + 500*time.Millisecond }), []string{"AckDeadline"}, "must be whole seconds (got 1m0.5s); use 1m1s"},

		// Retry policy backoffs 0–600s, min ≤ max.
		{"min backoff 600s", with(func(p *Plan) { p.MinBackoff = 600 * s }), nil, ""},
		{"min backoff 600s+1ns", with(func(p *Plan) { p.MinBackoff = 600*s + ns }), []string{"MinBackoff"}, "minimum backoff must be 0s–600s"},
		{"max backoff 600s+1ns", with(func(p *Plan) { p.MaxBackoff = 600*s + ns }), []string{"MaxBackoff"}, "maximum backoff must be 0s–600s"},
		{"min equals max", with(func(p *Plan) { p.MinBackoff, p.MaxBackoff = 30*s, 30*s }), nil, ""},
		{"min above max", with(func(p *Plan) { p.MinBackoff, p.MaxBackoff = 30*s, 30*s-ns }), []string{"MaxBackoff"},
			"minimum backoff 30s exceeds the maximum backoff 29.999999999s; raise the maximum to at least 30s"},

		// Max delivery attempts 5–100.
		{"attempts 4", with(func(p *Plan) { p.MaxDeliveryAttempts = 4 }), []string{"MaxDeliveryAttempts"}, "must be 5–100 (got 4); raise it"},
		{"attempts 5 at 70s backoff", with(func(p *Plan) { p.MinBackoff, p.MaxDeliveryAttempts = 70*s, 5 }), nil, ""},
		{"attempts 100", with(func(p *Plan) { p.MaxDeliveryAttempts = 100 }), nil, ""},
		{"attempts 101", with(func(p *Plan) { p.MaxDeliveryAttempts = 101 }), []string{"MaxDeliveryAttempts"}, "(got 101); lower it"},

		// Cloud Run request timeout ≤ 3600s.
		{"request timeout 3600s", with(func(p *Plan) { p.RequestTimeout = 3600 * s }), nil, ""},
		{"request timeout 3600s+1ns", with(func(p *Plan) { p.RequestTimeout = 3600*s + ns }), []string{"RequestTimeout"}, "at most 3600s"},

		// Invariant 5: claim + work + complete + unknown mark fit the push request.
		{"budget equals ack", with(func(p *Plan) { p.AckDeadline = 66 * s }), nil, ""},
		{"budget over ack", with(func(p *Plan) {
			p.AckDeadline = 66 * s
			p.WorkDeadline = 60*s + ns
			p.Lease = 90 * s
			p.Heartbeat = 30 * s
		}), []string{"AckDeadline"},
			"Time budget 1m6.000000001s (claim 2s + work deadline 1m0.000000001s + complete 2s + unknown mark 2s) exceeds the subscription ack deadline 1m6s, so the answer for a processed message can reach Pub/Sub after it gave up and redelivered (invariant 5); raise the ack deadline to at least 1m7s, or lower the work deadline to 1m or the store timeout to 1.999s"},
		{"work alone fits the ack deadline", with(func(p *Plan) { p.AckDeadline = 60 * s }), []string{"AckDeadline"},
			"raise the ack deadline to at least 1m6s, or lower the work deadline to 54s"},
		{"store timeout counts three times", with(func(p *Plan) { p.AckDeadline = 66 * s; p.StoreTimeout = 2*s + ns }), []string{"AckDeadline"},
			"raise the ack deadline to at least 1m7s, or lower the work deadline to 59.999s or the store timeout to 2s"},
		{"budget over ack cap", Plan{Lease: 60 * s, Heartbeat: 20 * s, WorkDeadline: 595 * s, MinBackoff: 20 * s}, []string{"WorkDeadline"},
			"lower the work deadline to 9m54s or the store timeout to 1.666s to fit Pub/Sub's 600s ack deadline cap"},
		{"store timeout over ack cap", Plan{Lease: 60 * s, Heartbeat: 20 * s, WorkDeadline: 60 * s, StoreTimeout: 4 * m, MinBackoff: 20 * s}, []string{"StoreTimeout"},
			"lower the store timeout to 3m to fit Pub/Sub's 600s ack deadline cap"},
		{"budget equals request timeout", with(func(p *Plan) { p.RequestTimeout = 66 * s }), nil, ""},
		{"budget over request timeout", with(func(p *Plan) { p.RequestTimeout = 65 * s }), []string{"RequestTimeout"},
			"Time budget 1m6s (claim 2s + work deadline 1m + complete 2s + unknown mark 2s) exceeds the Cloud Run request timeout 1m5s, so Cloud Run answers 504 before the gateway's answer (invariant 5); raise the request timeout to at least 1m6s, or lower the work deadline to 59s or the store timeout to 1.666s"},
		{"store timeout at the floor", with(func(p *Plan) { p.StoreTimeout = 100 * time.Millisecond }), nil, ""},
		{"store timeout under the floor", with(func(p *Plan) { p.StoreTimeout = 99 * time.Millisecond }), []string{"StoreTimeout"},
			"Store timeout must be at least 100ms (got 99ms)"},
		{"store timeout negative", with(func(p *Plan) { p.StoreTimeout = -s }), []string{"StoreTimeout"}, "zero for the default"},
		{"replay window negative", with(func(p *Plan) { p.DeadLetterReplayWindow = -s }), []string{"DeadLetterReplayWindow"}, "zero for no replay"},

		// Invariant 1.
		{"unrenewed lease equals work", Plan{Lease: 60 * s, WorkDeadline: 60 * s}, []string{"Lease"},
			"Lease 1m must exceed the work deadline 1m when no heartbeat renews it (invariant 1); raise the lease above 1m or set a heartbeat"},
		{"unrenewed lease just above work", Plan{Lease: 60*s + ns, WorkDeadline: 60 * s}, nil, ""},
		{"heartbeat a third", with(func(p *Plan) { p.Heartbeat = 20 * s }), nil, ""},
		{"heartbeat over a third", with(func(p *Plan) { p.Heartbeat = 20*s + ns }), []string{"Heartbeat"},
			"Heartbeat 20.000000001s must be at most a third of the lease 1m so a failed renewal is retried before the lease lapses (invariant 1); lower it to 20s or raise the lease to 1m1s"},
		{"heartbeat longer than work", with(func(p *Plan) { p.WorkDeadline = 4 * s; p.AckDeadline = 10 * s }), nil, ""},

		// Invariant 2: lease + ttl > work deadline + grace.
		{"ttl at the limit", with(func(p *Plan) { p.TTL = 10 * s }), []string{"TTL"},
			"Lease 1m plus TTL 10s must exceed the work deadline 1m plus shutdown grace 10s, the longest a holder can live (invariant 2); raise the TTL above 10s"},
		{"ttl just above, past the horizon too", with(func(p *Plan) { p.TTL = 4*time.Hour + ns; p.ShutdownGrace = 4 * time.Hour }), nil, ""},
		{"ttl at the limit, past the horizon", with(func(p *Plan) { p.TTL = 4 * time.Hour; p.ShutdownGrace = 4 * time.Hour }), []string{"TTL"}, "(invariant 2); raise the TTL above 4h"},
		{"grace counts", with(func(p *Plan) { p.TTL = 31 * s; p.ShutdownGrace = 31 * s }), []string{"TTL"}, "raise the TTL above 31s"},

		// Invariant 3: attempts ≥ ⌈W/min⌉ + 1 + Margin.
		{"attempts one short", with(func(p *Plan) { p.MaxDeliveryAttempts = 16 }), []string{"MaxDeliveryAttempts"},
			"Dead-letter max delivery attempts 16 cannot cover a wait of 2m20s behind a holder that dies after its last renewal (work deadline plus heartbeat plus lease): with every retry at the 10s minimum backoff it needs 17 (invariant 3); raise it to 17 or leave zero to size it"},
		{"attempts exact", with(func(p *Plan) { p.MaxDeliveryAttempts = 17 }), nil, ""},
		{"unrenewed 15m at 9s backoff", Plan{Lease: 15 * m, WorkDeadline: 9 * m, MinBackoff: 9 * s}, []string{"MinBackoff"},
			"Dead-letter max delivery attempts 100 cannot cover a wait of 15m behind a crashed holder (the lease): with every retry at the 9s minimum backoff it needs 103, over Pub/Sub's cap of 100 (invariant 3); raise the minimum backoff to at least 10s with 100 attempts, or shorten the lease"},
		{"no backoff fits", Plan{Lease: 17 * time.Hour, WorkDeadline: 9 * m, MinBackoff: 600 * s}, []string{"MinBackoff"},
			"no minimum backoff up to 600s fits; shorten the lease"},

		// Invariant 4: ttl ≥ horizon + replay window. base's horizon is
		// 17×66s + 16×600s = 2h58m42s.
		{"ttl at the horizon", with(func(p *Plan) { p.TTL = 2*time.Hour + 58*m + 42*s }), nil, ""},
		{"ttl under the horizon", with(func(p *Plan) { p.TTL = 2*time.Hour + 58*m + 42*s - ns }), []string{"TTL"},
			"TTL 2h58m41.999999999s must be at least the redelivery horizon 2h58m42s (17 attempts × 1m6s ack deadline + 16 × 10m max backoff), or a late redelivery finds the done record expired and runs the work again (invariant 4); raise the TTL to at least 2h58m42s, or lower the max backoff to 9m59s"},
		{"ttl 1h names the other fixes", with(func(p *Plan) { p.TTL = time.Hour; p.MaxDeliveryAttempts = 40 }), []string{"TTL"},
			"raise the TTL to at least 7h14m, or lower the max backoff to 24.615s"},
		{"ttl 4h names fewer attempts", with(func(p *Plan) { p.TTL = 4 * time.Hour; p.MaxDeliveryAttempts = 40 }), []string{"TTL"},
			"raise the TTL to at least 7h14m, or lower the max backoff to 5m1s, or lower the max delivery attempts to 22"},
		{"replay window counts", with(func(p *Plan) { p.TTL = 24 * time.Hour; p.DeadLetterReplayWindow = 7 * 24 * time.Hour }), []string{"TTL"},
			"the redelivery horizon 2h58m42s (17 attempts × 1m6s ack deadline + 16 × 10m max backoff) plus the dead-letter replay window 168h, or a late redelivery finds the done record expired and runs the work again (invariant 4); raise the TTL to at least 170h58m42s"},
		{"default ttl covers the replay window", with(func(p *Plan) { p.DeadLetterReplayWindow = 7 * 24 * time.Hour }), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.plan.Validate()
			if tt.fields == nil {
				if err != nil {
					t.Fatalf("Validate(%+v) = %v, want nil", tt.plan, err)
				}
				return
			}
			var pe *PlanError
			if !errors.As(err, &pe) {
				t.Fatalf("Validate(%+v) = %v, want a *PlanError", tt.plan, err)
			}
			if !errors.Is(err, ErrUnsafePlan) {
				t.Errorf("errors.Is(err, ErrUnsafePlan) = false")
			}
			if got := pe.Fields(); !reflect.DeepEqual(got, tt.fields) {
				t.Errorf("fields = %q, want %q\n%v", got, tt.fields, err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error = %q\nwant it to contain %q", err, tt.msg)
			}
		})
	}
}

// TestViolationsAreOneSentence checks every message is one line and one
// sentence that names a number.
func TestViolationsAreOneSentence(t *testing.T) {
	bad := Plan{Lease: -s, TTL: -s, Heartbeat: -s, WorkDeadline: -s, ShutdownGrace: -s, AckDeadline: 5 * s,
		MinBackoff: 700 * s, MaxBackoff: 700 * s, MaxDeliveryAttempts: 200, RequestTimeout: 4000 * s}
	err := bad.Validate()
	var pe *PlanError
	if !errors.As(err, &pe) {
		t.Fatalf("Validate = %v, want *PlanError", err)
	}
	if len(pe.Violations) != 10 {
		t.Errorf("got %d violations, want 10:\n%v", len(pe.Violations), err)
	}
	for _, v := range pe.Violations {
		if strings.ContainsAny(v.Message, "\n") || strings.Contains(v.Message, ". ") || strings.HasSuffix(v.Message, ".") {
			t.Errorf("not one sentence: %q", v.Message)
		}
		if !strings.ContainsAny(v.Message, "0123456789") {
			t.Errorf("names no number: %q", v.Message)
		}
		var got Violation
		if !errors.As(err, &got) {
			t.Errorf("errors.As(err, *Violation) = false")
		}
	}
	if !strings.HasPrefix(err.Error(), "sizing: 10 problems with the plan:\n  - ") {
		t.Errorf("error = %q", err)
	}
}

func TestWithDefaults(t *testing.T) {
	// Budget 9m6s, so the ack deadline and the request timeout are 546s; the
	// horizon 93×546s + 92×600s = 29h26m18s rounds up to a 30h TTL.
	got := Plan{Lease: 15 * m, WorkDeadline: 9 * m}.WithDefaults()
	want := Plan{Lease: 15 * m, TTL: 30 * time.Hour, WorkDeadline: 9 * m, ShutdownGrace: 10 * s, AckDeadline: 546 * s,
		MinBackoff: 10 * s, MaxBackoff: 600 * s, MaxDeliveryAttempts: 93, RequestTimeout: 546 * s, StoreTimeout: 2 * s}
	if got != want {
		t.Errorf("WithDefaults = %+v\nwant %+v", got, want)
	}
	tests := []struct {
		name string
		in   Plan
		ack  time.Duration
		rt   time.Duration
		n    int
	}{
		{"short work takes the minimum ack deadline", Plan{Lease: 60 * s, WorkDeadline: 4 * s}, 10 * s, 300 * s, 9},
		{"fractional budget rounds up", Plan{Lease: 60 * s, WorkDeadline: 30*s + ns}, 37 * s, 300 * s, 9},
		{"the store timeout counts three times", Plan{Lease: 60 * s, WorkDeadline: 30 * s, StoreTimeout: 5 * s}, 45 * s, 300 * s, 9},
		{"long work caps the ack deadline", Plan{Lease: 60 * m, WorkDeadline: 20 * m, MinBackoff: 60 * s}, 600 * s, 1206 * s, 63},
		{"attempts clamp to the cap", Plan{Lease: 60 * m, WorkDeadline: 20 * m}, 600 * s, 1206 * s, 100},
		{"attempts clamp to the floor", Plan{Lease: 20 * s, WorkDeadline: 4 * s, MinBackoff: 20 * s}, 10 * s, 300 * s, 5},
	}
	for _, tt := range tests {
		r := tt.in.WithDefaults()
		if r.AckDeadline != tt.ack || r.RequestTimeout != tt.rt || r.MaxDeliveryAttempts != tt.n {
			t.Errorf("%s: ack %s rt %s attempts %d, want %s %s %d", tt.name, r.AckDeadline, r.RequestTimeout, r.MaxDeliveryAttempts, tt.ack, tt.rt, tt.n)
		}
		if r.WithDefaults() != r {
			t.Errorf("%s: WithDefaults is not idempotent", tt.name)
		}
	}
	neg := Plan{TTL: -s, MinBackoff: -s}.WithDefaults()
	if neg.TTL != -s || neg.MinBackoff != -s {
		t.Errorf("negative fields replaced: %+v", neg)
	}
}
