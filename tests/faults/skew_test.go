package faults_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/supplier"
	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/internal/worker"
	"github.com/oncegate/oncegate/runtime/datastoregate"
	"github.com/oncegate/oncegate/runtime/gate"
)

// manualClock is a wall clock the test moves by hand; at returns a view of it
// shifted by a skew, as one instance's misset clock would read.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) at(skew time.Duration) func() time.Time {
	return func() time.Time {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.now.Add(skew)
	}
}

func (c *manualClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// skewRun is one holder and one claimant on the Datastore emulator, one of them
// with a skewed clock: the holder's body runs for its whole work deadline while
// the claimant retries every few seconds.
type skewRun struct {
	skew           time.Duration
	skewedHolder   bool
	lease, work    time.Duration
	tries          int
	stolenAfter    time.Duration // when the claimant won, -1 if never
	holderOutcome  gate.Outcome
	supplierReport supplier.Report
}

func (sr *skewRun) run(t *testing.T) {
	t.Helper()
	kind := testenv.UniqueName(t, "skew")
	clock := &manualClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	holderSkew, claimantSkew := time.Duration(0), sr.skew
	if sr.skewedHolder {
		holderSkew, claimantSkew = sr.skew, 0
	}
	sup := supplier.New()
	supSrv := httptest.NewServer(sup)
	defer supSrv.Close()
	newGate := func(skew time.Duration, owner string) *gate.Gate {
		s, err := datastoregate.New(datastoreEmulatorClient(t), &datastoregate.Options{Kind: kind, Now: clock.at(skew)})
		if err != nil {
			t.Fatal(err)
		}
		g, err := gate.New(s, &gate.Options{Namespace: "skew", Lease: sr.lease, WorkDeadline: sr.work, TTL: time.Hour, Owner: owner, Logger: quietLog})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	holder, claimant := newGate(holderSkew, "holder"), newGate(claimantSkew, "claimant")
	forward := func(ctx context.Context, c gate.Claim) error {
		return worker.Forward(ctx, supSrv.Client(), supSrv.URL, []byte(`{"order":"o-1"}`), c)
	}
	ctx := context.Background()
	started, finish := make(chan struct{}), make(chan struct{})
	holderErr := make(chan error, 1)
	go func() {
		holderErr <- holder.Lock(ctx, "o-1", func(ctx context.Context, c gate.Claim) error {
			close(started)
			<-finish // the body runs for the whole work deadline, then writes
			return forward(ctx, c)
		})
	}()
	<-started
	t0 := clock.at(0)()
	sr.stolenAfter = -1
	for at := time.Duration(0); at <= sr.work; at += 5 * time.Second {
		clock.set(t0.Add(at))
		sr.tries++
		err := claimant.Lock(ctx, "o-1", forward)
		if err == nil {
			sr.stolenAfter = at
			break
		}
		if o := gate.OutcomeOf(err); o != gate.OutcomeInProgress {
			t.Fatalf("claimant at +%s: outcome %s (%v), want in-progress or ran", at, o, err)
		}
	}
	close(finish)
	sr.holderOutcome = gate.OutcomeOf(<-holderErr)
	sr.supplierReport = sup.Report()
}

// TestClockSkewDatastore: Datastore has no server clock, so datastoregate
// judges leases on each instance's clock (Options.Now). One instance 30 s ahead
// or behind cannot take a held key while lease ≥ work deadline + skew; with a
// shorter lease (the control) the skewed instance takes the key early, and
// fencing is what stops the first holder's late write.
func TestClockSkewDatastore(t *testing.T) {
	const skew = 30 * time.Second
	f := figures{Class: "client clock skew ±30 s", Backend: "datastore (emulator)"}
	var notes []string
	for _, s := range []time.Duration{skew, -skew} {
		for _, skewedHolder := range []bool{false, true} {
			name := fmt.Sprintf("skew %+v on the %s", s, map[bool]string{false: "claimant", true: "holder"}[skewedHolder])
			t.Run(name, func(t *testing.T) {
				safe := &skewRun{skew: s, skewedHolder: skewedHolder, lease: 80 * time.Second, work: 45 * time.Second}
				safe.run(t)
				f.Messages++
				f.Injected++
				f.Tried += safe.tries + 1
				rep := safe.supplierReport
				f.Duplicates += rep.Duplicates
				if rep.Orders == 1 && rep.Duplicates == 0 {
					f.Processed++
				}
				if safe.stolenAfter >= 0 || safe.holderOutcome != gate.OutcomeRan || rep.Orders != 1 || rep.StaleFences != 0 {
					t.Errorf("lease 80s, work 45s: claimant won after %v, holder %s, supplier %+v; want the holder alone to run",
						safe.stolenAfter, safe.holderOutcome, rep)
				}
				// Control: lease 40 s < work 30 s + skew 30 s. A claimant ahead, or a
				// holder behind, sees the lease end 30 s early; the other two
				// directions only make it longer.
				ctl := &skewRun{skew: s, skewedHolder: skewedHolder, lease: 40 * time.Second, work: 30 * time.Second}
				ctl.run(t)
				rep = ctl.supplierReport
				shortens := (s > 0) != skewedHolder
				if !shortens {
					if ctl.stolenAfter >= 0 || ctl.holderOutcome != gate.OutcomeRan || rep.Orders != 1 || rep.Duplicates != 0 {
						t.Errorf("control (lease 40s): claimant won after %v, holder %s, supplier %+v; this skew lengthens the lease", ctl.stolenAfter, ctl.holderOutcome, rep)
					}
					notes = append(notes, name+": never taken")
					return
				}
				if ctl.stolenAfter < 0 || ctl.stolenAfter >= ctl.lease {
					t.Errorf("control (lease 40s): claimant won after %v; want before the lease ends (the skew shortens it)", ctl.stolenAfter)
				}
				if rep.Orders != 1 || rep.Duplicates != 0 || rep.StaleFences != 1 || ctl.holderOutcome != gate.OutcomeBodyFailed {
					t.Errorf("control: supplier %+v, holder %s; want the holder's late write refused as stale (body failed, nack)", rep, ctl.holderOutcome)
				}
				notes = append(notes, fmt.Sprintf("%s: taken after %s", name, ctl.stolenAfter))
			})
		}
	}
	f.Note = fmt.Sprintf("lease 80 s > work 45 s + 30 s: never taken early; control with lease 40 s, work 30 s: %s; where taken early, fencing refused the first holder's late write", strings.Join(notes, "; "))
	report(t, f)
}
