package gateenv_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/sizing"
)

// env is a getenv over a map.
type env = testenv.Env

// valid is a complete, safe environment for the "fake" backend.
var valid = env{
	"ONCEGATE_BACKEND": "fake", "ONCEGATE_NAMESPACE": "orders",
	"ONCEGATE_LEASE": "60s", "ONCEGATE_HEARTBEAT": "20s", "ONCEGATE_WORK_DEADLINE": "5m",
	"ONCEGATE_TTL": "12h", "ONCEGATE_MIN_BACKOFF": "10s", "ONCEGATE_MAX_BACKOFF": "600s",
	"ONCEGATE_ACK_DEADLINE": "310s", "ONCEGATE_REQUEST_TIMEOUT": "310s", "ONCEGATE_STORE_TIMEOUT": "3s",
	"ONCEGATE_OIDC_DISABLED": "1",
}

// fakeOpener counts opens and closes and never needs a server.
type fakeOpener struct{ opened, closed int }

func (f *fakeOpener) open(context.Context, func(string) string) (gate.Backend, func() error, error) {
	f.opened++
	return memgate.New(nil), func() error { f.closed++; return nil }, nil
}

func load(t *testing.T, e env) (*gateenv.Config, *fakeOpener, error) {
	t.Helper()
	f := &fakeOpener{}
	reg := gateenv.Backends()
	reg["fake"] = f.open
	c, err := gateenv.New(context.Background(), &gateenv.Options{Getenv: e.Get, Backends: reg,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return c, f, err
}

func TestValidEnvironment(t *testing.T) {
	c, f, err := load(t, valid)
	if err != nil {
		t.Fatal(err)
	}
	want := gate.Options{Namespace: "orders", Lease: time.Minute, Heartbeat: 20 * time.Second,
		WorkDeadline: 5 * time.Minute, TTL: 12 * time.Hour, StoreTimeout: 3 * time.Second}
	got := c.Gate
	got.Logger = nil
	if got.Namespace != want.Namespace || got.Lease != want.Lease || got.Heartbeat != want.Heartbeat ||
		got.WorkDeadline != want.WorkDeadline || got.TTL != want.TTL || got.StoreTimeout != want.StoreTimeout {
		t.Errorf("gate options %+v, want %+v", got, want)
	}
	if c.BackendName != "fake" || c.Disabled || f.opened != 1 || c.Plan.MaxDeliveryAttempts == 0 {
		t.Errorf("config %+v opened %d", c, f.opened)
	}
	g, err := c.NewGate()
	if err != nil {
		t.Fatal(err)
	}
	if g.Key("m1") != "orders:m1" {
		t.Errorf("key %q", g.Key("m1"))
	}
	if po := c.PushOptions(); po.Disabled || po.Logger == nil {
		t.Errorf("push options %+v", po)
	}
	_ = c.Close()
	_ = c.Close()
	if f.closed != 1 {
		t.Errorf("closed %d times, want 1", f.closed)
	}
}

func TestRefusals(t *testing.T) {
	tests := []struct {
		name  string
		env   env
		names []string // variables the error must name
		form  string   // part of the accepted form
	}{
		{"backend missing", valid.With("ONCEGATE_BACKEND", ""), []string{"ONCEGATE_BACKEND"}, "one of datastore, fake, memory, redis, sql"},
		{"backend unknown", valid.With("ONCEGATE_BACKEND", "mongo"), []string{"ONCEGATE_BACKEND"}, "one of"},
		{"namespace missing", valid.With("ONCEGATE_NAMESPACE", ""), []string{"ONCEGATE_NAMESPACE"}, "no colon"},
		{"namespace with colon", valid.With("ONCEGATE_NAMESPACE", "a:b"), []string{"ONCEGATE_NAMESPACE"}, "no colon"},
		{"namespace with space", valid.With("ONCEGATE_NAMESPACE", "a b"), []string{"ONCEGATE_NAMESPACE"}, "letters"},
		{"lease missing", valid.With("ONCEGATE_LEASE", ""), []string{"ONCEGATE_LEASE"}, "Go duration"},
		{"lease without unit", valid.With("ONCEGATE_LEASE", "60"), []string{"ONCEGATE_LEASE"}, "Go duration"},
		{"attempts not a number", valid.With("ONCEGATE_MAX_DELIVERY_ATTEMPTS", "many"), []string{"ONCEGATE_MAX_DELIVERY_ATTEMPTS"}, "whole number"},
		{"disabled not a boolean", valid.With("ONCEGATE_DISABLED", "maybe"), []string{"ONCEGATE_DISABLED"}, "1"},
		{"several at once", valid.With("ONCEGATE_BACKEND", "", "ONCEGATE_LEASE", "x"), []string{"ONCEGATE_BACKEND", "ONCEGATE_LEASE"}, ""},
		{"several plan variables", valid.With("ONCEGATE_LEASE", "x", "ONCEGATE_WORK_DEADLINE", "y"), []string{"ONCEGATE_LEASE", "ONCEGATE_WORK_DEADLINE"}, ""},
		{"unsafe plan: work outlives an unrenewed lease", valid.With("ONCEGATE_HEARTBEAT", "0s", "ONCEGATE_LEASE", "1m", "ONCEGATE_WORK_DEADLINE", "5m"),
			[]string{"ONCEGATE_LEASE"}, ""},
		{"unsafe plan: heartbeat too slow", valid.With("ONCEGATE_HEARTBEAT", "50s"), []string{"ONCEGATE_HEARTBEAT"}, ""},
		// Invariant 4: 41 attempts × 310s + 40 × 600s = 10h11m50s.
		{"unsafe plan: ttl under the redelivery horizon", valid.With("ONCEGATE_TTL", "1h"), []string{"ONCEGATE_TTL"},
			"(invariant 4); raise the TTL to at least 10h11m50s"},
		{"unsafe plan: replay window past the ttl", valid.With("ONCEGATE_DEAD_LETTER_REPLAY_WINDOW", "168h"), []string{"ONCEGATE_TTL"},
			"raise the TTL to at least 178h11m50s"},
		// Invariant 5: claim 3s + work 5m + complete 3s + unknown mark 3s.
		{"unsafe plan: store timeout past the ack deadline", valid.With("ONCEGATE_STORE_TIMEOUT", "4s"), []string{"ONCEGATE_ACK_DEADLINE", "ONCEGATE_REQUEST_TIMEOUT"},
			"raise the ack deadline to at least 5m12s, or lower the work deadline to 4m58s or the store timeout to 3.333s"},
		{"store timeout not a duration", valid.With("ONCEGATE_STORE_TIMEOUT", "3"), []string{"ONCEGATE_STORE_TIMEOUT"}, "Go duration"},
		{"unsafe plan: negative store outage", valid.With("ONCEGATE_STORE_OUTAGE", "-1m"), []string{"ONCEGATE_STORE_OUTAGE"}, "zero for none budgeted"},
		{"store outage not a duration", valid.With("ONCEGATE_STORE_OUTAGE", "5"), []string{"ONCEGATE_STORE_OUTAGE"}, "Go duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, f, err := load(t, tt.env)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			for _, n := range tt.names {
				if !strings.Contains(msg, n) {
					t.Errorf("error %q does not name %s", msg, n)
				}
			}
			if !strings.Contains(msg, tt.form) {
				t.Errorf("error %q lacks the accepted form %q", msg, tt.form)
			}
			if f.opened != 0 {
				t.Error("backend opened despite the error")
			}
			var ee *sizing.EnvError
			if !errors.As(err, &ee) && !errors.Is(err, sizing.ErrUnsafePlan) {
				t.Errorf("error %v is neither an EnvError nor an unsafe plan", err)
			}
		})
	}
}

func TestUnsafePlanMatches(t *testing.T) {
	_, _, err := load(t, valid.With("ONCEGATE_HEARTBEAT", "0s", "ONCEGATE_LEASE", "1m", "ONCEGATE_WORK_DEADLINE", "5m"))
	var pe *sizing.PlanError
	if !errors.Is(err, sizing.ErrUnsafePlan) || !errors.As(err, &pe) || len(pe.Violations) == 0 {
		t.Errorf("err = %v", err)
	}
}

func TestDisabled(t *testing.T) {
	c, f, err := load(t, env{"ONCEGATE_DISABLED": "1", "ONCEGATE_OIDC_DISABLED": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Disabled || f.opened != 0 || !c.PushOptions().Disabled {
		t.Errorf("config %+v, opened %d", c, f.opened)
	}
	if _, err := c.NewGate(); err != nil {
		t.Error(err)
	}
	// A malformed namespace is still refused.
	if _, _, err := load(t, env{"ONCEGATE_DISABLED": "true", "ONCEGATE_NAMESPACE": "a:b"}); err == nil {
		t.Error("bad namespace accepted while disabled")
	}
	if c, _, err := load(t, valid.With("ONCEGATE_DISABLED", "0")); err != nil || c.Disabled {
		t.Errorf("ONCEGATE_DISABLED=0: %v %+v", err, c)
	}
}

func TestBackendErrorIsWrapped(t *testing.T) {
	reg := gateenv.Backends()
	boom := errors.New("dial tcp: connection refused")
	reg["fake"] = func(context.Context, func(string) string) (gate.Backend, func() error, error) { return nil, nil, boom }
	_, err := gateenv.New(context.Background(), &gateenv.Options{Getenv: valid.Get, Backends: reg})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "fake backend") {
		t.Errorf("err = %v", err)
	}
}
