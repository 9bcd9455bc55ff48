package pullenv_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/gateenv/pullenv"
	"github.com/oncegate/oncegate/sizing"
)

// validPull is a safe pull worker environment on the memory backend.
var validPull = env{
	"ONCEGATE_BACKEND": "memory", "ONCEGATE_NAMESPACE": "orders",
	"ONCEGATE_LEASE": "60s", "ONCEGATE_HEARTBEAT": "20s", "ONCEGATE_WORK_DEADLINE": "60s",
	"ONCEGATE_ACK_DEADLINE": "10s", "ONCEGATE_PULL_SUBSCRIPTION": "orders-pull",
	"ONCEGATE_PULL_BACKEND_CONNS": "10", "ONCEGATE_PULL_MAX_EXTENSION_PERIOD": "60s",
}

// env is a getenv over a map.
type env = testenv.Env

func newPull(t *testing.T, e env) (*pullenv.Config, error) {
	t.Helper()
	c, err := pullenv.New(context.Background(), &gateenv.Options{Getenv: e.Get, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil {
		t.Cleanup(func() { _ = c.Close() })
	}
	return c, err
}

// TestNew: the pull plan's numbers reach the gate, the client settings and
// the Receiver options; an ack deadline under the work deadline, refused for
// push, is fine for pull since the client extends it. The push OIDC variables
// are not required (validPull sets none), nor read when set.
func TestNew(t *testing.T) {
	c, err := newPull(t, validPull)
	if err != nil {
		t.Fatal(err)
	}
	if c.OIDC != nil {
		t.Errorf("OIDC = %+v, want nil for a pull worker", c.OIDC)
	}
	if c, err := newPull(t, validPull.With(gateenv.EnvOIDCAudience, "https://x/", gateenv.EnvOIDCDisabled, "1")); err != nil || c.OIDC != nil {
		t.Errorf("pull worker with push OIDC variables (even contradictory ones): %v, OIDC %v; want them ignored", err, c)
	}
	s := c.ReceiveSettings()
	o := c.PullOptions()
	for _, f := range []struct {
		name      string
		got, want any
	}{
		{"Subscription", c.Subscription, "orders-pull"},
		{"Gate.StoreTimeout", c.Gate.StoreTimeout, 2 * time.Second},
		{"Gate.Lease", c.Gate.Lease, time.Minute},
		{"MaxOutstandingMessages", s.MaxOutstandingMessages, 10},
		{"MaxDurationPerAckExtension", s.MaxDurationPerAckExtension, time.Minute},
		{"MaxExtension", s.MaxExtension, time.Hour},
		{"ShutdownOptions.Timeout", s.ShutdownOptions.Timeout, 30 * time.Second},
		{"Drain", o.Drain, 26 * time.Second},
		{"AckTimeout", o.AckTimeout, 2 * time.Second},
	} {
		if f.got != f.want {
			t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
		}
	}
	if _, err := gateenv.New(context.Background(), &gateenv.Options{Getenv: validPull.Get}); !errors.Is(err, sizing.ErrUnsafePlan) {
		t.Fatalf("push New accepted a 10s ack deadline under a 60s work deadline: %v", err)
	}
}

// TestNewRefuses: an unsafe or incomplete pull environment stops start-up
// with one line naming every variable and the fix.
func TestNewRefuses(t *testing.T) {
	for _, c := range []struct {
		name   string
		e      env
		unsafe bool
		want   []string
	}{
		{"flow control past the pool", validPull.With("ONCEGATE_PULL_MAX_OUTSTANDING", "100"), true,
			[]string{"ONCEGATE_PULL_MAX_OUTSTANDING: MaxOutstandingMessages 100 exceeds the backend's 10 connections", "lower it to 10"}},
		{"extension shorter than the budget", validPull.With("ONCEGATE_PULL_MAX_EXTENSION", "60s"), true,
			[]string{"ONCEGATE_PULL_MAX_EXTENSION: ", "raise MaxExtension to at least 1m8s"}},
		{"drain past the grace", validPull.With("ONCEGATE_PULL_DRAIN", "27s"), true,
			[]string{"ONCEGATE_PULL_DRAIN: ", "lower the drain to 26s"}},
		{"no subscription and a bad number", validPull.With("ONCEGATE_PULL_SUBSCRIPTION", "", "ONCEGATE_PULL_BACKEND_CONNS", "ten"), false,
			[]string{"ONCEGATE_PULL_SUBSCRIPTION is not set", `ONCEGATE_PULL_BACKEND_CONNS="ten" is malformed`}},
		{"disabled", validPull.With("ONCEGATE_DISABLED", "1"), false, []string{"ONCEGATE_DISABLED", "no pass-through"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := newPull(t, c.e)
			if err == nil {
				t.Fatal("New accepted it")
			}
			if errors.Is(err, sizing.ErrUnsafePlan) != c.unsafe {
				t.Errorf("errors.Is(err, ErrUnsafePlan) = %v, want %v: %v", !c.unsafe, c.unsafe, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans several lines: %q", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
		})
	}
}
