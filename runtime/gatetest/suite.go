package gatetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// RunConformanceTests runs the whole contract suite against the backends that
// newHarness makes.
func RunConformanceTests(t *testing.T, newHarness HarnessMaker) {
	t.Helper()
	groups := []struct {
		name  string
		tests map[string]func(*testing.T, *env)
	}{
		{"Claim", claimTests},
		{"Complete", completeTests},
		{"Release", releaseTests},
		{"Fence", fenceTests},
		{"Keys", keyTests},
		{"Race", raceTests},
		{"Port", portTests},
		{"Gate", gateTests},
		{"DistributedLock", dlockTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, name := range slices.Sorted(maps.Keys(g.tests)) {
				test := g.tests[name]
				t.Run(name, func(t *testing.T) { test(t, setup(t, newHarness)) })
			}
		})
	}
}

// env is one test's backend.
type env struct {
	t   *testing.T
	ctx context.Context
	h   Harness
	b   gate.Backend
}

func setup(t *testing.T, newHarness HarnessMaker) *env {
	t.Helper()
	ctx := context.Background()
	h, err := newHarness(ctx, t)
	if err != nil {
		t.Fatalf("make harness: %v", err)
	}
	t.Cleanup(h.Close)
	b, err := h.MakeBackend(ctx, t)
	if err != nil {
		t.Fatalf("make backend: %v", err)
	}
	return &env{t: t, ctx: ctx, h: h, b: b}
}

func token() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func req(key string, lease time.Duration) gate.ClaimRequest {
	return gate.ClaimRequest{Key: key, Token: token(), Owner: "owner-" + token()[:4], Lease: lease, TTL: TTL}
}

// claim claims key and fails the test on an error.
func (e *env) claim(r gate.ClaimRequest) gate.ClaimResult {
	e.t.Helper()
	res, err := e.b.Claim(e.ctx, r)
	if err != nil {
		e.t.Fatalf("Claim(%.40q): %v", r.Key, err)
	}
	return res
}

// win claims key and fails the test unless the claim is won.
func (e *env) win(key string, lease time.Duration) gate.Record {
	e.t.Helper()
	res := e.claim(req(key, lease))
	if res.Status != gate.Won {
		e.t.Fatalf("Claim(%.40q) = %v, want won", key, res.Status)
	}
	return res.Record
}

func (e *env) expect(key string, want gate.ClaimStatus) gate.Record {
	e.t.Helper()
	res := e.claim(req(key, LongLease))
	if res.Status != want {
		e.t.Fatalf("Claim(%.40q) = %v (fence %d, state %s), want %v", key, res.Status, res.Record.Fence, res.Record.State, want)
	}
	return res.Record
}

func (e *env) complete(key string, fence int64, ttl time.Duration, result []byte) bool {
	e.t.Helper()
	ok, err := e.b.Complete(e.ctx, gate.Completion{Key: key, Fence: fence, TTL: ttl, Result: result})
	if err != nil {
		e.t.Fatalf("Complete(%.40q, %d): %v", key, fence, err)
	}
	return ok
}

func (e *env) release(key string, fence int64) bool {
	e.t.Helper()
	ok, err := e.b.Release(e.ctx, key, fence)
	if err != nil {
		e.t.Fatalf("Release(%.40q, %d): %v", key, fence, err)
	}
	return ok
}

func wantFence(t *testing.T, what string, got, want int64) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: fence = %d, want %d", what, got, want)
	}
}
