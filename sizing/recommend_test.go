package sizing

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRecommend(t *testing.T) {
	tests := []struct {
		name string
		in   Plan
		want Plan // compared after WithDefaults
	}{
		{"lease left zero takes the recommended renewed lease",
			Plan{WorkDeadline: 2 * m},
			Plan{Lease: 60 * s, Heartbeat: 20 * s, WorkDeadline: 2 * m, AckDeadline: 2*m + 6*s, MaxDeliveryAttempts: 23}},
		{"a heartbeat alone gets a lease three times it",
			Plan{WorkDeadline: 30 * s, Heartbeat: 5 * s},
			Plan{Lease: 15 * s, Heartbeat: 5 * s, WorkDeadline: 30 * s, MaxDeliveryAttempts: 8}},
		{"a long unrenewed lease raises the minimum backoff",
			Plan{Lease: 3 * time.Hour, WorkDeadline: 2 * m},
			Plan{Lease: 3 * time.Hour, WorkDeadline: 2 * m, MinBackoff: 112 * s, MaxDeliveryAttempts: 100}},
		{"the maximum backoff follows a raised minimum",
			Plan{Lease: 3 * time.Hour, WorkDeadline: 2 * m, MaxBackoff: 60 * s},
			Plan{Lease: 3 * time.Hour, WorkDeadline: 2 * m, MinBackoff: 112 * s, MaxBackoff: 112 * s, MaxDeliveryAttempts: 100}},
		{"a larger explicit attempts count is kept",
			Plan{Lease: 60 * s, Heartbeat: 20 * s, WorkDeadline: 60 * s, MaxDeliveryAttempts: 40},
			Plan{Lease: 60 * s, Heartbeat: 20 * s, WorkDeadline: 60 * s, MaxDeliveryAttempts: 40}},
		{"a smaller explicit attempts count is raised",
			Plan{Lease: 60 * s, Heartbeat: 20 * s, WorkDeadline: 60 * s, MaxDeliveryAttempts: 6},
			Plan{Lease: 60 * s, Heartbeat: 20 * s, WorkDeadline: 60 * s, MaxDeliveryAttempts: 17}},
		{"the design example stays at a 10s backoff",
			Plan{Lease: 15 * m, WorkDeadline: 9 * m},
			Plan{Lease: 15 * m, WorkDeadline: 9 * m, MaxDeliveryAttempts: 93}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Recommend(tt.in)
			if err != nil {
				t.Fatalf("Recommend(%+v): %v", tt.in, err)
			}
			if want := tt.want.WithDefaults(); got != want {
				t.Errorf("Recommend(%+v)\n got %+v\nwant %+v", tt.in, got, want)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("recommended plan does not validate: %v", err)
			}
		})
	}
}

func TestRecommendSaysWhyNoneExists(t *testing.T) {
	tests := []struct {
		name   string
		in     Plan
		fields []string
		msg    string
	}{
		{"work deadline missing", Plan{Lease: 60 * s}, []string{"WorkDeadline"}, "Work deadline must be set"},
		{"unrenewed lease under the work", Plan{Lease: 60 * s, WorkDeadline: 2 * m}, []string{"Lease"}, "set a heartbeat"},
		{"no backoff fits", Plan{Lease: 17 * time.Hour, WorkDeadline: 9 * m}, []string{"MinBackoff"}, "no minimum backoff up to 600s fits; shorten the lease"},
		{"work longer than any push", Plan{WorkDeadline: 11 * m}, []string{"WorkDeadline"}, "lower the work deadline to 9m54s to fit Pub/Sub's 600s ack deadline cap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Recommend(tt.in)
			var pe *PlanError
			if !errors.As(err, &pe) {
				t.Fatalf("Recommend(%+v) = %+v, %v; want a *PlanError", tt.in, got, err)
			}
			if !reflect.DeepEqual(pe.Fields(), tt.fields) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %v\nwant fields %q and %q", err, tt.fields, tt.msg)
			}
			if got != got.WithDefaults() {
				t.Errorf("result without defaults: %+v", got)
			}
		})
	}
}

// TestRecommendGrid checks that whenever some whole-second minimum backoff up
// to the cap makes a plan safe, Recommend finds a safe plan.
func TestRecommendGrid(t *testing.T) {
	for _, lease := range []time.Duration{10 * s, 60 * s, 5 * m, 15 * m, time.Hour, 4 * time.Hour, 16 * time.Hour, 17 * time.Hour} {
		for _, hb := range []time.Duration{0, 3 * s, 20 * s} {
			for _, wd := range []time.Duration{5 * s, 60 * s, 9 * m} {
				in := Plan{Lease: lease, Heartbeat: hb, WorkDeadline: wd}
				got, err := Recommend(in)
				exists := false
				for mb := s; mb <= RetryBackoffMax && !exists; mb += s {
					q := in
					q.MinBackoff = mb
					exists = q.Validate() == nil
				}
				if exists != (err == nil) {
					t.Errorf("Recommend(%+v) = %+v, %v; a safe backoff exists: %v", in, got, err, exists)
				}
			}
		}
	}
}

func TestRecommendChangesSayWhatAndWhy(t *testing.T) {
	// The example: an explicit attempts count and TTL both too low.
	in := Plan{Lease: 2 * m, WorkDeadline: 60 * s, TTL: time.Millisecond, MaxDeliveryAttempts: 10, AckDeadline: 60 * s}
	got, cs, err := RecommendChanges(in)
	if err != nil {
		t.Fatalf("RecommendChanges(%+v): %v", in, err)
	}
	byField := map[string]Change{}
	for _, c := range cs {
		if c.Why == "" {
			t.Errorf("change %+v says no why", c)
		}
		byField[c.Field] = c
	}
	// W = 2m: ⌈120/10⌉+1+2 = 15 attempts; the budget 66s raises the ack
	// deadline; horizon 15×66s + 14×600s = 2h36m30s, so a 3h TTL.
	want := []Change{
		{Field: "TTL", From: "1ms", To: "3h", Replaced: true},
		{Field: "AckDeadline", From: "1m", To: "1m6s", Replaced: true},
		{Field: "MaxDeliveryAttempts", From: "10", To: "15", Replaced: true},
		{Field: "StoreTimeout", From: "0s", To: "2s"},
		{Field: "ShutdownGrace", From: "0s", To: "10s"},
		{Field: "MinBackoff", From: "0s", To: "10s"},
	}
	for _, w := range want {
		c, ok := byField[w.Field]
		if !ok || c.From != w.From || c.To != w.To || c.Replaced != w.Replaced {
			t.Errorf("change of %s = %+v, want %+v", w.Field, c, w)
		}
	}
	if !strings.Contains(byField["TTL"].Why, "invariant 4") || !strings.Contains(byField["MaxDeliveryAttempts"].Why, "invariant 3") ||
		!strings.Contains(byField["AckDeadline"].Why, "invariant 5") {
		t.Errorf("reasons do not name the invariants: %+v", cs)
	}
	if _, ok := byField["Lease"]; ok {
		t.Errorf("the explicit lease was changed: %+v", byField["Lease"])
	}
	if got.TTL != 3*time.Hour || got.MaxDeliveryAttempts != 15 || got.AckDeadline != 66*s {
		t.Errorf("Recommend = %+v", got)
	}
	// Every change is listed: applying them to the input gives the output.
	if len(cs) != 8 { // those above, MaxBackoff and RequestTimeout; nothing for the replay window left 0
		t.Errorf("%d changes, want 8: %+v", len(cs), cs)
	}
	// A safe explicit plan is left alone.
	safe := base().WithDefaults()
	if _, cs, err := RecommendChanges(safe); err != nil || len(cs) != 0 {
		t.Errorf("RecommendChanges(safe) = %+v, %v; want no changes", cs, err)
	}
}
