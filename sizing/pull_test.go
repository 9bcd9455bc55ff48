package sizing_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/sizing"
)

// safePull is a pull plan built around a renewed lease, a 10-connection pool
// and a bounded extension period.
func safePull() sizing.PullPlan {
	return sizing.PullPlan{
		Plan:               sizing.Plan{Lease: time.Minute, Heartbeat: 20 * time.Second, WorkDeadline: time.Minute},
		BackendConnections: 10,
		MaxExtensionPeriod: time.Minute,
	}
}

func TestPullPlanDefaults(t *testing.T) {
	p := safePull()
	if err := p.Validate(); err != nil {
		t.Fatalf("safe plan refused: %v", err)
	}
	r := p.WithDefaults()
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"ShutdownGrace", r.ShutdownGrace, 30 * time.Second},
		{"StoreTimeout", r.StoreTimeout, 2 * time.Second},
		{"MaxExtension", r.MaxExtension, 60 * time.Minute},
		{"MaxOutstandingMessages", r.MaxOutstandingMessages, 10},
		{"Drain", r.Drain, 26 * time.Second},
		{"Budget", r.Budget(), 68 * time.Second},
		{"Hold", r.Hold(), 68 * time.Second},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if h := r.Horizon(); r.TTL < h || r.TTL%time.Hour != 0 || r.TTL-h >= time.Hour {
		t.Errorf("TTL %s, want the horizon %s rounded up to an hour", r.TTL, h)
	}
	if r.MaxOutstandingMessages = 0; (sizing.PullPlan{Plan: r.Plan}).WithDefaults().MaxOutstandingMessages != sizing.DefaultMaxOutstandingMessages {
		t.Error("without a connection bound MaxOutstandingMessages is not the client default")
	}
}

func TestPullHorizon(t *testing.T) {
	for _, c := range []struct {
		name string
		p    sizing.PullPlan
		hold time.Duration
		want time.Duration
	}{
		// No extension period: a dead subscriber's last extension may hold the
		// message for up to 600s per attempt.
		{"unbounded period", sizing.PullPlan{Plan: sizing.Plan{Lease: time.Minute, WorkDeadline: 30 * time.Second, MaxDeliveryAttempts: 5}},
			600 * time.Second, 5*600*time.Second + 4*600*time.Second},
		{"period 60s", sizing.PullPlan{Plan: sizing.Plan{Lease: time.Minute, WorkDeadline: 30 * time.Second, MaxDeliveryAttempts: 5, MaxBackoff: 60 * time.Second}, MaxExtensionPeriod: time.Minute},
			60 * time.Second, 5*60*time.Second + 4*60*time.Second},
		{"extension off", sizing.PullPlan{Plan: sizing.Plan{Lease: time.Minute, WorkDeadline: 30 * time.Second, MaxDeliveryAttempts: 5, AckDeadline: 90 * time.Second, MaxBackoff: 10 * time.Second}, MaxExtension: -1},
			90 * time.Second, 5*90*time.Second + 4*10*time.Second},
	} {
		r := c.p.WithDefaults()
		if r.Hold() != c.hold || r.Horizon() != c.want {
			t.Errorf("%s: hold %s horizon %s, want %s and %s", c.name, r.Hold(), r.Horizon(), c.hold, c.want)
		}
	}
}

// TestPullPlanViolations: each unsafe change is refused naming the field and
// the fix.
func TestPullPlanViolations(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(p *sizing.PullPlan)
		field  string
		fix    string
	}{
		{"extension shorter than the budget", func(p *sizing.PullPlan) { p.MaxExtension = time.Minute }, "MaxExtension", "raise MaxExtension to at least 1m8s"},
		{"extension off, short ack deadline", func(p *sizing.PullPlan) { p.MaxExtension, p.AckDeadline = -1, time.Minute }, "AckDeadline", "turn the extension on (MaxExtension at least 1m8s)"},
		{"extension period out of range", func(p *sizing.PullPlan) { p.MaxExtensionPeriod = 5 * time.Second }, "MaxExtensionPeriod", "10s–600s"},
		{"flow control over the pool", func(p *sizing.PullPlan) { p.MaxOutstandingMessages = 100 }, "MaxOutstandingMessages", "lower it to 10 or raise the pool to 100"},
		{"unlimited flow control", func(p *sizing.PullPlan) { p.MaxOutstandingMessages = -1 }, "MaxOutstandingMessages", "MaxOutstandingMessages unlimited exceeds"},
		{"drain past the grace", func(p *sizing.PullPlan) { p.Drain = 27 * time.Second }, "Drain", "lower the drain to 26s or raise the shutdown grace to 31s"},
		{"no room to drain", func(p *sizing.PullPlan) { p.ShutdownGrace = 3 * time.Second }, "ShutdownGrace", "raise the grace (terminationGracePeriodSeconds) above 4s"},
		{"ttl under the horizon", func(p *sizing.PullPlan) { p.TTL = time.Hour; p.MaxExtensionPeriod = 0 }, "TTL", "raise the TTL to"},
		{"invariant 1", func(p *sizing.PullPlan) { p.Heartbeat, p.Lease = 0, 30*time.Second }, "Lease", "invariant 1"},
		{"negative drain", func(p *sizing.PullPlan) { p.Drain = -time.Second }, "Drain", "must not be negative"},
		// The runtime's floors: pullenv.New refuses these at start-up, so
		// the plan the components check must too.
		{"lease under the runtime's floor", func(p *sizing.PullPlan) {
			p.Lease, p.Heartbeat, p.WorkDeadline = 900*time.Millisecond, 300*time.Millisecond, 500*time.Millisecond
		}, "Lease", "below the 1s floor"},
		{"heartbeat under the runtime's floor", func(p *sizing.PullPlan) { p.Lease, p.Heartbeat = 2*time.Second, 500*time.Millisecond }, "Heartbeat", "raise it to at least 1s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := safePull()
			c.change(&p)
			err := p.Validate()
			var pe *sizing.PlanError
			if !errors.As(err, &pe) || !errors.Is(err, sizing.ErrUnsafePlan) {
				t.Fatalf("Validate = %v, want a *PlanError", err)
			}
			for _, v := range pe.Violations {
				if v.Field == c.field && strings.Contains(v.Message, c.fix) {
					return
				}
			}
			t.Fatalf("no violation of %s saying %q in:\n%v", c.field, c.fix, err)
		})
	}
}

// TestPullPlanIgnoresPushDeadlines: a work deadline past the subscription's
// ack deadline is fine for pull while the client extends the deadline.
func TestPullPlanIgnoresPushDeadlines(t *testing.T) {
	p := safePull()
	p.AckDeadline = 10 * time.Second
	if err := p.Validate(); err != nil {
		t.Fatalf("pull plan refused for a push-only rule: %v", err)
	}
	if err := p.Plan.Validate(); err == nil {
		t.Fatal("the push plan accepted a work deadline past its ack deadline")
	}
}

func TestPullEnvRoundTrip(t *testing.T) {
	p := safePull()
	env := p.Env()
	for _, name := range append(sizing.EnvNames(), sizing.PullEnvNames()...) {
		if _, ok := env[name]; !ok {
			t.Errorf("Env lacks %s", name)
		}
	}
	got, err := sizing.PullFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if want := p.WithDefaults(); got != want {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, want)
	}
}

func TestPullFromEnvErrors(t *testing.T) {
	base := safePull().Env()
	for _, c := range []struct {
		set  map[string]string
		vars []string
	}{
		{map[string]string{sizing.EnvPullMaxOutstanding: "many"}, []string{sizing.EnvPullMaxOutstanding}},
		{map[string]string{sizing.EnvPullMaxExtension: "forever", sizing.EnvLease: ""}, []string{sizing.EnvPullMaxExtension, sizing.EnvLease}},
		{map[string]string{sizing.EnvPullBackendConns: "-3"}, []string{sizing.EnvPullBackendConns}},
	} {
		get := func(k string) string {
			if v, ok := c.set[k]; ok {
				return v
			}
			return base[k]
		}
		_, err := sizing.PullFromEnv(get)
		for _, name := range c.vars {
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("PullFromEnv(%v) = %v, want an error naming %s", c.set, err, name)
			}
		}
		var ee *sizing.EnvError
		if !errors.As(err, &ee) {
			t.Errorf("PullFromEnv(%v): %v is not an *EnvError", c.set, err)
		}
	}
	unsafe := safePull()
	unsafe.MaxOutstandingMessages = 500
	env := unsafe.Env()
	if _, err := sizing.PullFromEnv(func(k string) string { return env[k] }); !errors.Is(err, sizing.ErrUnsafePlan) {
		t.Fatalf("unsafe plan from the environment: %v, want ErrUnsafePlan", err)
	}
}
