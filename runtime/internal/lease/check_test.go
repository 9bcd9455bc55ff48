package lease_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/internal/lease"
)

func TestNonNegative(t *testing.T) {
	ok := lease.NonNegative("x.Options", lease.Field{Name: "A", Val: 0}, lease.Field{Name: "B", Val: time.Second})
	bad := lease.NonNegative("x.Options", lease.Field{Name: "A", Val: time.Second}, lease.Field{Name: "B", Val: -time.Second}, lease.Field{Name: "C", Val: -1})
	if ok != nil || bad == nil || bad.Error() != "x.Options.B: must be zero (default) or positive, got -1s" {
		t.Fatalf("NonNegative: %v, %v; want nil, then the first negative field named", ok, bad)
	}
}

func TestInterval(t *testing.T) {
	for _, tc := range []struct {
		iv    time.Duration
		parts int
		want  string // empty means accepted
	}{
		{20 * time.Second, 3, ""},
		{30 * time.Second, 2, ""},
		{20*time.Second + 1, 3, "x.Options.Every: 20.000000001s must be positive and at most a third of Lease 1m0s (20s); fix it"},
		{31 * time.Second, 2, "x.Options.Every: 31s must be positive and at most half of Lease 1m0s (30s); fix it"},
		{0, 2, "x.Options.Every: 0s must be positive and at most half of Lease 1m0s (30s); fix it"},
		{-time.Second, 3, "x.Options.Every: -1s must be positive"},
		{16 * time.Second, 4, "at most 1/4 of Lease"},
	} {
		err := lease.Interval("x.Options", "Every", tc.iv, time.Minute, tc.parts, "fix it")
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Interval(%v, 1/%d): %v, want %q", tc.iv, tc.parts, err, tc.want)
		}
	}
}

func TestDefaultOwner(t *testing.T) {
	host, _ := os.Hostname()
	if got, want := lease.DefaultOwner(), host+"/"+strconv.Itoa(os.Getpid()); got != want {
		t.Fatalf("DefaultOwner() = %q, want %q", got, want)
	}
}
