package faults_test

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/oncegate/oncegate/internal/dsfake"
	"github.com/oncegate/oncegate/runtime/datastoregate"
	"github.com/oncegate/oncegate/runtime/gate"
)

// dsGate is the gate configuration of the Datastore fault tests: as netGate,
// with a store timeout above the injected latency.
var dsGate = gate.Options{Lease: 2 * time.Second, TTL: 10 * time.Minute,
	WorkDeadline: 500 * time.Millisecond, StoreTimeout: time.Second}

// dsFault is one class of Datastore fault, injected by during through the
// fake's fault injection; it counts what it injected.
type dsFault struct {
	name   string
	during func(ctx context.Context, srv *dsfake.Server, injected *atomic.Int64)
}

// armed injects one fault with arm, then waits until at least two more commits
// reached the fake, so the fault was taken before the next one is armed.
func armed(ctx context.Context, srv *dsfake.Server, injected *atomic.Int64, arm func()) {
	for ctx.Err() == nil {
		base := srv.Count(dsfake.MethodCommit)
		arm()
		injected.Add(1)
		for ctx.Err() == nil && srv.Count(dsfake.MethodCommit) < base+2 {
			time.Sleep(2 * time.Millisecond)
		}
	}
}

var dsFaults = []dsFault{
	{"aborted commits", func(ctx context.Context, srv *dsfake.Server, n *atomic.Int64) {
		armed(ctx, srv, n, func() { srv.AbortCommits(1) })
		srv.AbortCommits(0)
	}},
	{"lost commit responses", func(ctx context.Context, srv *dsfake.Server, n *atomic.Int64) {
		armed(ctx, srv, n, func() {
			code := codes.Unavailable
			if rand.IntN(2) == 0 {
				code = codes.DeadlineExceeded
			}
			srv.DropCommitResponses(1, code)
		})
		srv.DropCommitResponses(0, codes.OK)
	}},
	{"latency", func(ctx context.Context, srv *dsfake.Server, n *atomic.Int64) {
		every(ctx, 200*time.Millisecond, func() {
			srv.SetLatency(time.Duration(rand.IntN(600)) * time.Millisecond)
			n.Add(1)
		})
		srv.SetLatency(0)
	}},
	{"all at once", func(ctx context.Context, srv *dsfake.Server, n *atomic.Int64) {
		go every(ctx, 300*time.Millisecond, func() {
			srv.SetLatency(time.Duration(rand.IntN(300)) * time.Millisecond)
			n.Add(1)
		})
		armed(ctx, srv, n, func() {
			if rand.IntN(2) == 0 {
				srv.AbortCommits(1 + rand.IntN(3))
			} else {
				srv.DropCommitResponses(1, codes.Unavailable)
			}
		})
		srv.AbortCommits(0)
		srv.DropCommitResponses(0, codes.OK)
		srv.SetLatency(0)
	}},
}

// TestDatastoreFaults delivers messages through three gateway instances on the
// Datastore fake under load (many racing duplicates) while it aborts commits,
// loses commit responses after applying them, and answers slowly.
func TestDatastoreFaults(t *testing.T) {
	for _, df := range dsFaults {
		t.Run(df.name, func(t *testing.T) {
			srv := dsfake.Start(t)
			backends := make([]gate.Backend, 3)
			for i := range backends {
				s, err := datastoregate.New(srv.Client(t, ""), &datastoregate.Options{RetryBackoff: 2 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				backends[i] = s
			}
			n := scaled(t, 60)
			r := newRig(t, rigOptions{Backends: backends, Gate: dsGate, AckDeadline: 5 * time.Second,
				Concurrency: 16, DupEvery: 3, Span: max(2*time.Second, time.Duration(n)*50*time.Millisecond)})
			var injected atomic.Int64
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			f := r.run(ctx, n, func(ctx context.Context) { df.during(ctx, srv, &injected) })
			f.Class, f.Backend, f.Injected = "datastore: "+df.name, "datastore (fake)", int(injected.Load())
			if f.Injected == 0 {
				t.Fatal("no fault was injected")
			}
			f.Note += r.leftovers(t, backends[0], n)
			report(t, f)
		})
	}
}
