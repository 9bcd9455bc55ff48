package sizing

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// This file checks Validate against an independent step-by-step simulation of
// one key: a holder claims it, renews it (or not) and completes, stalls or
// dies, while a duplicate of its message is delivered and retried. The
// simulation uses none of the package's formulas; it replays store calls and
// deliveries in time order under the adversary the package documents:
//
//   - heartbeat renewals are issued every interval while the work runs; one
//     may fail, and one may take effect just under an interval after it was
//     issued;
//   - the holder may die right after its last renewal took effect, or stall
//     after its claim and wake to complete at work deadline plus grace;
//   - the duplicate's first delivery lands just after the claim and every
//     retry follows the previous one after exactly the minimum backoff;
//     Margin deliveries after the key frees are lost to other causes.

type outcome string

const (
	ok         outcome = ""
	overlap    outcome = "invariant 1: the lease lapsed while the work ran"
	refenced   outcome = "invariant 2: the record could be deleted while its holder lived"
	deadLetter outcome = "invariant 3: the duplicate was dead-lettered"
	redelivery outcome = "the push request ended before the work"
)

type scenario struct {
	kind       string // "live", "crash" or "zombie"
	failTick   int    // live: renewal attempt that fails (0: none); the next one lands late
	crashAfter int    // crash: the holder dies after this renewal took effect, late (0: after its claim)
}

// key is the store's record of the simulated key.
type key struct {
	leaseExpiry, expiresAt time.Duration
	done                   bool
}

// renew applies a renewal that takes effect at at; it reports false when the
// lease had already lapsed then, so another claim could have won.
func (k *key) renew(at time.Duration, p Plan) bool {
	if at >= k.leaseExpiry {
		return false
	}
	k.leaseExpiry = at + p.Lease
	k.expiresAt = max(k.expiresAt, k.leaseExpiry+p.TTL)
	return true
}

// duplicate delivers the duplicate at 0, b, 2b, … and reports whether a
// delivery gets through (finds the key done or free) within the attempts.
func duplicate(p Plan, k *key, doneAt time.Duration) bool {
	lost := 0
	for n := 1; n <= p.MaxDeliveryAttempts; n++ {
		at := time.Duration(n-1) * p.MinBackoff
		switch {
		case k.done && at >= doneAt:
			return true // Duplicate: acked
		case !k.done && at >= k.leaseExpiry:
			if lost < Margin {
				lost++ // the store blinked: 503, nack
				continue
			}
			return true // reclaimed
		}
	}
	return false
}

func simulate(p Plan, sc scenario) outcome {
	const eps = time.Nanosecond
	k := &key{leaseExpiry: p.Lease, expiresAt: p.Lease + p.TTL} // claimed at 0
	switch sc.kind {
	case "live":
		if p.WorkDeadline > p.AckDeadline || p.WorkDeadline > p.RequestTimeout {
			return redelivery
		}
		for n := 1; p.Heartbeat > 0 && time.Duration(n)*p.Heartbeat < p.WorkDeadline; n++ {
			if n == sc.failTick {
				continue
			}
			at := time.Duration(n) * p.Heartbeat
			if sc.failTick > 0 && n == sc.failTick+1 {
				at += p.Heartbeat - eps
			}
			if !k.renew(at, p) {
				return overlap
			}
		}
		if k.leaseExpiry <= p.WorkDeadline {
			return overlap
		}
		k.done = true // completes at the work deadline
		if !duplicate(p, k, p.WorkDeadline) {
			return deadLetter
		}
	case "zombie":
		if k.expiresAt <= p.WorkDeadline+p.ShutdownGrace {
			return refenced
		}
	case "crash":
		for n := 1; n <= sc.crashAfter; n++ {
			at := time.Duration(n) * p.Heartbeat
			if n == sc.crashAfter {
				at += p.Heartbeat - eps
			}
			k.renew(at, p)
		}
		if !duplicate(p, k, 0) {
			return deadLetter
		}
	}
	return ok
}

func scenarios(p Plan) []scenario {
	out := []scenario{{kind: "live"}, {kind: "zombie"}, {kind: "crash"}}
	if p.Heartbeat <= 0 {
		return out
	}
	ticks := 0
	for time.Duration(ticks+1)*p.Heartbeat < p.WorkDeadline {
		ticks++
	}
	for _, n := range slices.Compact([]int{1, (ticks + 1) / 2, ticks}) {
		if n >= 1 && n <= ticks {
			out = append(out, scenario{kind: "live", failTick: n}, scenario{kind: "crash", crashAfter: n})
		}
	}
	return out
}

// grid yields explicit plans (no zero field but Heartbeat), so the simulation
// reads the same numbers Validate checks without going through defaults.
func grid(yield func(Plan) bool) {
	for _, lease := range []time.Duration{10 * s, 30 * s, 60 * s, 61 * s, 90 * s, 5 * m, 15 * m} {
		for _, hb := range []time.Duration{0, 10 * s, 20 * s, 21 * s, 30 * s} {
			for _, wd := range []time.Duration{10 * s, 30 * s, 60 * s, 2 * m, 10 * m} {
				for _, ttl := range []time.Duration{s, 30 * s, time.Hour} {
					for _, grace := range []time.Duration{10 * s, 30 * s} {
						for _, ack := range []time.Duration{10 * s, 60 * s, 600 * s} {
							for _, minB := range []time.Duration{s, 10 * s, 60 * s} {
								for _, n := range []int{5, 15, 93, 100} {
									for _, rt := range []time.Duration{60 * s, 300 * s} {
										if !yield(Plan{Lease: lease, TTL: ttl, Heartbeat: hb, WorkDeadline: wd, ShutdownGrace: grace,
											AckDeadline: ack, MinBackoff: minB, MaxBackoff: 600 * s, MaxDeliveryAttempts: n, RequestTimeout: rt}) {
											return
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

func TestValidPlansSurviveSimulation(t *testing.T) {
	valid, caught := 0, map[outcome]int{}
	for p := range grid {
		err := p.Validate()
		var failed []outcome
		for _, sc := range scenarios(p) {
			if o := simulate(p, sc); o != ok {
				failed = append(failed, o)
				if err == nil {
					t.Fatalf("plan %+v validates but scenario %+v breaks %s", p, sc, o)
				}
			}
		}
		if err == nil {
			valid++
			continue
		}
		slices.Sort(failed)
		for _, o := range slices.Compact(failed) {
			caught[o]++
		}
		// Without a heartbeat the adversary is exact: the simulation fails an
		// invariant precisely when Validate reports it.
		if p.Heartbeat == 0 {
			checkExact(t, p, err, failed)
		}
	}
	t.Logf("%d valid plans; unsafe plans caught by the simulation: %v", valid, caught)
	if valid < 1000 {
		t.Errorf("only %d valid plans in the grid", valid)
	}
	for _, o := range []outcome{overlap, refenced, deadLetter, redelivery} {
		if caught[o] == 0 {
			t.Errorf("the simulation never caught %q: the grid is too narrow", o)
		}
	}
}

func checkExact(t *testing.T, p Plan, err error, failed []outcome) {
	t.Helper()
	var pe *PlanError
	if !errors.As(err, &pe) {
		t.Fatalf("Validate(%+v) = %v", p, err)
	}
	reported := map[outcome]bool{}
	for _, v := range pe.Violations {
		switch v.Field {
		case "Lease":
			reported[overlap] = true
		case "TTL":
			reported[refenced] = true
		case "MinBackoff", "MaxDeliveryAttempts":
			reported[deadLetter] = true
		case "AckDeadline", "WorkDeadline", "RequestTimeout":
			reported[redelivery] = true
		}
	}
	// The live scenario stops at its first failure, so an overlap or a lost
	// push can hide a dead letter; compare the scenarios that run on their own.
	for _, o := range []outcome{refenced, overlap, redelivery} {
		if got := slices.Contains(failed, o); got != reported[o] && !(o == overlap && reported[redelivery]) {
			t.Errorf("plan %+v: simulation %s=%v, Validate says %v", p, o, got, err)
		}
	}
	crash := simulate(p, scenario{kind: "crash"}) == deadLetter
	if crash != reported[deadLetter] {
		t.Errorf("plan %+v: crash scenario dead-letters=%v, Validate says %v", p, crash, fmt.Sprint(err))
	}
}
