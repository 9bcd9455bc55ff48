package sizing

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDesignExample(t *testing.T) {
	// docs/design.md: an unrenewed 15-minute lease with a 10 s minimum backoff needs
	// about 91 attempts under the conservative model, while doubling says 8.
	got := Plan{Lease: 15 * m, WorkDeadline: 10 * m}.Attempts()
	// The 93 attempts leave no spare one at the minimum backoff (RideOut 0);
	// doubling, delivery 91 comes 10+20+40+80+160+320 s + 84 × 600 s = 51030 s
	// after the first, 13h55m30s past the 15m wait.
	want := Attempts{Wait: 15 * m, Conservative: 91, Doubling: 8, Required: 93, RideOutDoubling: 13*time.Hour + 55*m + 30*s}
	if got != want {
		t.Errorf("Attempts = %+v, want %+v", got, want)
	}
}

func TestWait(t *testing.T) {
	tests := []struct {
		p    Plan
		want time.Duration
	}{
		{Plan{Lease: 60 * s, WorkDeadline: 30 * s}, 60 * s},
		{Plan{Lease: 60 * s, WorkDeadline: 30 * s, Heartbeat: 20 * s}, 110 * s},
		{Plan{Lease: -s, WorkDeadline: -s, Heartbeat: 20 * s}, 20 * s},
		{Plan{Lease: maxDuration, WorkDeadline: maxDuration, Heartbeat: s}, maxDuration},
	}
	for _, tt := range tests {
		if got := tt.p.Wait(); got != tt.want {
			t.Errorf("%+v.Wait() = %s, want %s", tt.p, got, tt.want)
		}
	}
}

func TestConservativeAttempts(t *testing.T) {
	tests := []struct {
		wait, min time.Duration
		want      int
	}{
		{900 * s, 10 * s, 91},
		{0, 10 * s, 1},
		{-s, 10 * s, 1},
		{ns, 10 * s, 2},
		{10 * s, 10 * s, 2},
		{10*s + ns, 10 * s, 3},
		{20 * s, 10 * s, 3},
		{s, 0, Unbounded},
		{s, -s, Unbounded},
		{maxDuration, ns, Unbounded},
		{maxDuration - 1, ns, Unbounded},
	}
	for _, tt := range tests {
		if got := ConservativeAttempts(tt.wait, tt.min); got != tt.want {
			t.Errorf("ConservativeAttempts(%s, %s) = %d, want %d", tt.wait, tt.min, got, tt.want)
		}
	}
}

func TestDoublingAttempts(t *testing.T) {
	tests := []struct {
		wait, min, max time.Duration
		want           int
	}{
		{900 * s, 10 * s, 600 * s, 8},    // deliveries at 0, 10, 30, 70, 150, 310, 630, 1230
		{630 * s, 10 * s, 600 * s, 7},    // the 7th lands exactly at 630
		{631 * s, 10 * s, 600 * s, 8},    //
		{900 * s, 10 * s, 60 * s, 18},    // 0,10,30,70 then every 60: 130..910
		{900 * s, 10 * s, 10 * s, 91},    // min = max is the conservative model
		{900 * s, 10 * s, 5 * s, 91},     // max below min counts as min
		{0, 10 * s, 600 * s, 1},          //
		{10 * s, 10 * s, 600 * s, 2},     //
		{s, 0, 600 * s, Unbounded},       //
		{maxDuration, ns, ns, Unbounded}, // saturates
		{maxDuration, ns, maxDuration, 64},
	}
	for _, tt := range tests {
		if got := DoublingAttempts(tt.wait, tt.min, tt.max); got != tt.want {
			t.Errorf("DoublingAttempts(%s, %s, %s) = %d, want %d", tt.wait, tt.min, tt.max, got, tt.want)
		}
	}
}

// TestModelsAgainstDeliveries replays deliveries one by one and counts how many
// land before one is at or after the end of the wait.
func TestModelsAgainstDeliveries(t *testing.T) {
	count := func(wait time.Duration, delay func(k int) time.Duration) int {
		at, n := time.Duration(0), 1
		for at < wait {
			at += delay(n)
			n++
		}
		return n
	}
	for _, wait := range []time.Duration{0, s, 9 * s, 10 * s, 11 * s, 59 * s, 60 * s, 61 * s, 140 * s, 15 * m, 3 * time.Hour} {
		for _, lo := range []time.Duration{s, 3 * s, 10 * s, 45 * s, 600 * s} {
			if got, want := ConservativeAttempts(wait, lo), count(wait, func(int) time.Duration { return lo }); got != want {
				t.Errorf("ConservativeAttempts(%s, %s) = %d, replay says %d", wait, lo, got, want)
			}
			for _, hi := range []time.Duration{lo, 2 * lo, 60 * s, 600 * s} {
				doubling := func(k int) time.Duration {
					d := lo
					for i := 1; i < k && d < hi; i++ {
						d *= 2
					}
					return min(d, max(hi, lo))
				}
				if got, want := DoublingAttempts(wait, lo, hi), count(wait, doubling); got != want {
					t.Errorf("DoublingAttempts(%s, %s, %s) = %d, replay says %d", wait, lo, hi, got, want)
				}
			}
		}
	}
}

func TestMinBackoffFor(t *testing.T) {
	tests := []struct {
		wait     time.Duration
		attempts int
		want     time.Duration
	}{
		{900 * s, 100, 10 * s},
		{900 * s, 93, 10 * s},
		{900 * s, 92, 11 * s},
		{140 * s, 17, 10 * s},
		{0, 100, s},
		{900 * s, 3, 0},
		{17 * time.Hour, 100, 631 * s},
	}
	for _, tt := range tests {
		if got := MinBackoffFor(tt.wait, tt.attempts); got != tt.want {
			t.Errorf("MinBackoffFor(%s, %d) = %s, want %s", tt.wait, tt.attempts, got, tt.want)
		}
	}
	// The result fits, and one second less does not.
	for _, wait := range []time.Duration{s, 61 * s, 15 * m, 2 * time.Hour} {
		for _, n := range []int{4, 5, 17, 93, 100} {
			got := MinBackoffFor(wait, n)
			if ConservativeAttempts(wait, got)+Margin > n {
				t.Errorf("MinBackoffFor(%s, %d) = %s does not fit", wait, n, got)
			}
			if got > s && ConservativeAttempts(wait, got-s)+Margin <= n {
				t.Errorf("MinBackoffFor(%s, %d) = %s is not the smallest", wait, n, got)
			}
		}
	}
}

func TestStoreOutageAttempts(t *testing.T) {
	tests := []struct {
		p                      Plan
		conservative, doubling int
		rideOut, rideOutDbl    time.Duration
	}{
		// 17 attempts, W = 2m20s: 15 + 2 needed, none spare.
		{Plan{Lease: m, Heartbeat: 20 * s, WorkDeadline: m}, 15, 5, 0, DoublingSpan(15, 10*s, 600*s) - (2*m + 20*s)},
		// The same wait with 30 attempts: 13 spare, 130 s of outage.
		{Plan{Lease: m, Heartbeat: 20 * s, WorkDeadline: m, MaxDeliveryAttempts: 30}, 15, 5, 130 * s, DoublingSpan(28, 10*s, 600*s) - (2*m + 20*s)},
		// A 5m outage budgeted: ⌈300/10⌉ = 30 more deliveries, sized to 47.
		{Plan{Lease: m, Heartbeat: 20 * s, WorkDeadline: m, StoreOutage: 5 * m}, 45, 7, 5 * m, DoublingSpan(45, 10*s, 600*s) - (2*m + 20*s)},
		// An outage that is not a whole number of backoffs rounds up.
		{Plan{Lease: 2 * m, WorkDeadline: m, StoreOutage: 25 * s}, 16, 5, 30 * s, DoublingSpan(16, 10*s, 600*s) - 2*m},
	}
	for _, tt := range tests {
		a := tt.p.Attempts()
		if a.Conservative != tt.conservative || a.Doubling != tt.doubling || a.Required != tt.conservative+Margin ||
			a.RideOut != tt.rideOut || a.RideOutDoubling != tt.rideOutDbl || a.Outage != tt.p.StoreOutage {
			t.Errorf("%+v.Attempts() = %+v, want conservative %d, doubling %d, ride-out %s, doubling ride-out %s",
				tt.p, a, tt.conservative, tt.doubling, tt.rideOut, tt.rideOutDbl)
		}
		if err := tt.p.Validate(); err != nil {
			t.Errorf("%+v: %v", tt.p, err)
		}
	}
}

// TestStoreOutageBoundary checks that Validate accepts a store outage up to
// Attempts.RideOut (computed without one) and refuses one a nanosecond longer
// with an invariant 3 sentence naming the outage.
func TestStoreOutageBoundary(t *testing.T) {
	for _, p := range []Plan{
		{Lease: m, Heartbeat: 20 * s, WorkDeadline: m, MaxDeliveryAttempts: 30},
		{Lease: 2 * m, WorkDeadline: m, MaxDeliveryAttempts: 100, MinBackoff: 7 * s},
		{Lease: 15 * m, WorkDeadline: 9 * m, MaxDeliveryAttempts: 100, MinBackoff: 30 * s},
	} {
		r := p.Attempts().RideOut
		if r <= 0 {
			t.Fatalf("%+v: no ride-out", p)
		}
		p.StoreOutage = r
		if err := p.Validate(); err != nil {
			t.Errorf("outage %s = RideOut refused: %v", r, err)
		}
		if got := p.Attempts().RideOut; got != r {
			t.Errorf("RideOut changed with StoreOutage set: %s, want %s", got, r)
		}
		p.StoreOutage = r + ns
		var pe *PlanError
		if err := p.Validate(); !errors.As(err, &pe) || pe.Violations[0].Invariant != 3 ||
			!strings.Contains(err.Error(), "store outage of "+FormatDuration(r+ns)) {
			t.Errorf("outage %s past RideOut %s: Validate = %v", r+ns, r, err)
		}
	}
	if err := (Plan{Lease: m, WorkDeadline: 30 * s, StoreOutage: -s}).Validate(); err == nil ||
		!strings.Contains(err.Error(), "Store outage must not be negative (got -1s); use a positive duration or zero for none budgeted") {
		t.Errorf("negative outage: %v", err)
	}
	// Past Pub/Sub's cap the fix names a minimum backoff that fits, outage included.
	p := Plan{Lease: 2 * m, WorkDeadline: m, MaxDeliveryAttempts: 100, StoreOutage: 20 * m}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "raise the minimum backoff to at least 14s with 100 attempts") {
		t.Errorf("outage past the cap: %v", err)
	}
	p.MinBackoff = 14 * s
	if err := p.Validate(); err != nil {
		t.Errorf("the named fix fails: %v", err)
	}
	p.MinBackoff = 13 * s
	if err := p.Validate(); err == nil {
		t.Errorf("a backoff below the named fix passes")
	}
}

func TestDoublingSpan(t *testing.T) {
	for _, w := range []time.Duration{0, ns, 10 * s, 15 * m, 3 * time.Hour, 40 * time.Hour} {
		for _, b := range [][2]time.Duration{{10 * s, 600 * s}, {s, 60 * s}, {7 * s, 5 * s}} {
			n := DoublingAttempts(w, b[0], b[1])
			if DoublingSpan(n, b[0], b[1]) < w || (n > 1 && DoublingSpan(n-1, b[0], b[1]) >= w) {
				t.Errorf("wait %s, backoffs %v: DoublingAttempts %d disagrees with DoublingSpan", w, b, n)
			}
		}
	}
	if got := DoublingSpan(Unbounded, s, maxDuration); got != maxDuration {
		t.Errorf("DoublingSpan does not saturate: %s", got)
	}
}
