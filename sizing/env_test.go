package sizing

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

func lookup(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

func TestEnvExact(t *testing.T) {
	got := base().Env()
	want := map[string]string{
		"ONCEGATE_LEASE":                     "1m",
		"ONCEGATE_TTL":                       "3h",
		"ONCEGATE_HEARTBEAT":                 "20s",
		"ONCEGATE_WORK_DEADLINE":             "1m",
		"ONCEGATE_SHUTDOWN_GRACE":            "10s",
		"ONCEGATE_ACK_DEADLINE":              "1m6s",
		"ONCEGATE_MIN_BACKOFF":               "10s",
		"ONCEGATE_MAX_BACKOFF":               "10m",
		"ONCEGATE_MAX_DELIVERY_ATTEMPTS":     "17",
		"ONCEGATE_REQUEST_TIMEOUT":           "5m",
		"ONCEGATE_STORE_TIMEOUT":             "2s",
		"ONCEGATE_DEAD_LETTER_REPLAY_WINDOW": "0s",
		"ONCEGATE_STORE_OUTAGE":              "0s",
	}
	if !maps.Equal(got, want) {
		t.Errorf("Env() = %v\nwant %v", got, want)
	}
	names := EnvNames()
	slices.Sort(names)
	if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, names) {
		t.Errorf("Env keys %q differ from EnvNames %q", keys, names)
	}
	if h := (Plan{Lease: 2 * m, WorkDeadline: m}).Env()[EnvHeartbeat]; h != "0s" {
		t.Errorf("no heartbeat is written as %q, want 0s", h)
	}
}

func TestEnvRoundTrip(t *testing.T) {
	plans := []Plan{
		base(),
		{Lease: 15 * m, WorkDeadline: 10 * m},
		{Lease: 90*s + 250*time.Millisecond, TTL: 36 * time.Hour, WorkDeadline: 61*s + ns, ShutdownGrace: 3 * s,
			AckDeadline: 70 * s, MinBackoff: 1500 * time.Millisecond, MaxBackoff: 90 * s, MaxDeliveryAttempts: 77, RequestTimeout: 1234 * s},
		{Lease: m, Heartbeat: 20 * s, WorkDeadline: m, StoreOutage: 5*m + 500*time.Millisecond},
		{Lease: m, WorkDeadline: 30 * s, MaxDeliveryAttempts: 5, StoreOutage: time.Hour}, // unsafe: the outage needs more attempts
		{Lease: 5 * s, WorkDeadline: 9 * s},                                              // unsafe: the runtime must see the same violation
	}
	for _, p := range plans {
		got, err := FromEnv(lookup(p.Env()))
		if want := p.WithDefaults(); got != want {
			t.Errorf("FromEnv(Env(%+v)) = %+v, want %+v", p, got, want)
		}
		if (err == nil) != (p.Validate() == nil) || (err != nil && err.Error() != p.Validate().Error()) {
			t.Errorf("FromEnv error %v, Validate %v", err, p.Validate())
		}
	}
}

func TestFromEnv(t *testing.T) {
	minimal := map[string]string{EnvLease: " 60s ", EnvWorkDeadline: "30s", EnvHeartbeat: "20s"}
	got, err := FromEnv(lookup(minimal))
	if err != nil {
		t.Fatalf("FromEnv(minimal): %v", err)
	}
	if want := (Plan{Lease: 60 * s, WorkDeadline: 30 * s, Heartbeat: 20 * s}).WithDefaults(); got != want {
		t.Errorf("FromEnv(minimal) = %+v, want %+v", got, want)
	}

	tests := []struct {
		name string
		env  map[string]string
		vars []string // variables named by EnvErrors, in order
		line string   // the whole message when one variable is wrong
	}{
		{"nothing set", nil, []string{EnvLease, EnvWorkDeadline}, ""},
		{"lease missing", map[string]string{EnvWorkDeadline: "30s"}, []string{EnvLease},
			"ONCEGATE_LEASE is not set; want a Go duration such as 60s, 1m30s or 15m"},
		{"bare seconds", map[string]string{EnvLease: "60", EnvWorkDeadline: "30s"}, []string{EnvLease},
			`ONCEGATE_LEASE="60" is malformed; want a Go duration such as 60s, 1m30s or 15m`},
		{"malformed optional", map[string]string{EnvLease: "60s", EnvWorkDeadline: "30s", EnvAckDeadline: "ten seconds"}, []string{EnvAckDeadline}, ""},
		{"malformed attempts", map[string]string{EnvLease: "60s", EnvWorkDeadline: "30s", EnvMaxDeliveryAttempts: "5.5"}, []string{EnvMaxDeliveryAttempts},
			`ONCEGATE_MAX_DELIVERY_ATTEMPTS="5.5" is malformed; want a whole number from 5 to 100, or 0 to size it`},
		{"malformed outage", map[string]string{EnvLease: "60s", EnvWorkDeadline: "30s", EnvStoreOutage: "5"}, []string{EnvStoreOutage},
			`ONCEGATE_STORE_OUTAGE="5" is malformed; want a Go duration such as 60s, 1m30s or 15m`},
		{"several", map[string]string{EnvLease: "x", EnvWorkDeadline: "30s", EnvTTL: "1d", EnvRequestTimeout: "5 m"}, []string{EnvLease, EnvTTL, EnvRequestTimeout}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := FromEnv(lookup(tt.env))
			if err == nil {
				t.Fatalf("FromEnv = %+v, nil; want an error", p)
			}
			if p != (Plan{}) {
				t.Errorf("plan %+v returned with an environment error", p)
			}
			var named []string
			for _, e := range flatten(err) {
				var ee *EnvError
				if !errors.As(e, &ee) {
					t.Fatalf("error %v is not an *EnvError", e)
				}
				named = append(named, ee.Var)
				if strings.Contains(e.Error(), "\n") {
					t.Errorf("message spans lines: %q", e)
				}
			}
			if !slices.Equal(named, tt.vars) {
				t.Errorf("variables named %q, want %q", named, tt.vars)
			}
			if tt.line != "" && err.Error() != tt.line {
				t.Errorf("error = %q\nwant %q", err, tt.line)
			}
			if errors.Is(err, ErrUnsafePlan) {
				t.Errorf("environment error matches ErrUnsafePlan")
			}
		})
	}
}

func TestFromEnvUnsafe(t *testing.T) {
	env := map[string]string{EnvLease: "60s", EnvWorkDeadline: "60s", EnvMaxDeliveryAttempts: "6"}
	got, err := FromEnv(lookup(env))
	if !errors.Is(err, ErrUnsafePlan) {
		t.Fatalf("FromEnv = %v, want ErrUnsafePlan", err)
	}
	var pe *PlanError
	if !errors.As(err, &pe) || !slices.Equal(pe.Fields(), []string{"Lease", "MaxDeliveryAttempts"}) {
		t.Errorf("error %v", err)
	}
	if got.Lease != 60*s || got.MaxDeliveryAttempts != 6 || got.TTL != DefaultTTL {
		t.Errorf("resolved plan not returned: %+v", got)
	}
}

func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func FuzzFromEnv(f *testing.F) {
	f.Add("60s", "1h", "20s", "60s", "10s", "60s", "10s", "600s", "17", "300s", "")
	f.Add("15m", "", "", "10m", "", "", "", "", "", "", "")
	f.Add("-1s", "0", "1d", "x", " ", "1e3s", ".5s", "600.000000001s", "-3", "3600s", "-5m")
	f.Add("60s", "", "20s", "60s", "", "", "", "", "", "", "5m")
	f.Fuzz(func(t *testing.T, lease, ttl, hb, wd, grace, ack, minB, maxB, attempts, rt, outage string) {
		env := map[string]string{EnvLease: lease, EnvTTL: ttl, EnvHeartbeat: hb, EnvWorkDeadline: wd, EnvShutdownGrace: grace,
			EnvAckDeadline: ack, EnvMinBackoff: minB, EnvMaxBackoff: maxB, EnvMaxDeliveryAttempts: attempts, EnvRequestTimeout: rt,
			EnvStoreOutage: outage}
		p, err := FromEnv(lookup(env))
		var ee *EnvError
		if errors.As(err, &ee) {
			return
		}
		if p != p.WithDefaults() {
			t.Fatalf("FromEnv returned a plan without defaults: %+v", p)
		}
		if (err == nil) != (p.Validate() == nil) {
			t.Fatalf("FromEnv error %v but Validate %v", err, p.Validate())
		}
		back, err2 := FromEnv(lookup(p.Env()))
		if back != p || (err == nil) != (err2 == nil) {
			t.Fatalf("Env round trip: %+v → %+v (%v, %v)", p, back, err, err2)
		}
	})
}
