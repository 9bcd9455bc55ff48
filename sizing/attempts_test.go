package sizing

import (
	"testing"
	"time"
)

func TestDesignExample(t *testing.T) {
	// docs/design.md: an unrenewed 15-minute lease with a 10 s minimum backoff needs
	// about 91 attempts under the conservative model, while doubling says 8.
	got := Plan{Lease: 15 * m, WorkDeadline: 10 * m}.Attempts()
	want := Attempts{Wait: 15 * m, Conservative: 91, Doubling: 8, Required: 93}
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
