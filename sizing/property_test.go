package sizing

import (
	"errors"
	"fmt"
	"math/rand/v2"
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
//     Margin deliveries after the key frees are lost to other causes;
//   - each store phase of a delivery (claim, complete, unknown mark) stalls
//     until its timeout, and the answer is lost when it comes after the ack
//     deadline or the request timeout;
//   - a processed message's answers are all lost, so Pub/Sub redelivers it
//     until its attempts run out, each delivery running to its ack deadline
//     and each retry waiting a backoff the adversary picks within the retry
//     policy (best effort, so the longest is the maximum backoff), and an
//     operator may replay its dead letter just before the replay window ends.

type outcome string

const (
	ok         outcome = ""
	overlap    outcome = "invariant 1: the lease lapsed while the work ran"
	refenced   outcome = "invariant 2: the record could be deleted while its holder lived"
	deadLetter outcome = "invariant 3: the duplicate was dead-lettered"
	redelivery outcome = "invariant 5: the answer came after the push request ended"
	repeated   outcome = "invariant 4: a late redelivery found the done record expired"
)

type scenario struct {
	kind       string // "live", "crash", "zombie", "answer" or "late"
	backoff    string // late: "max", "min", "doubling" or "random"
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
	return duplicateAt(p, k, doneAt, func(n int) time.Duration { return time.Duration(n-1) * p.MinBackoff }, outage{})
}

// outage is a store outage [from, from+length): every delivery in it is
// answered 503 (fail closed) and spent.
type outage struct{ from, length time.Duration }

func (o outage) down(at time.Duration) bool { return at >= o.from && at-o.from < o.length }

// duplicateAt delivers the duplicate at at(1), at(2), … and reports whether a
// delivery gets through within the attempts: deliveries during the outage
// are spent, then Margin deliveries after the key frees are lost.
func duplicateAt(p Plan, k *key, doneAt time.Duration, at func(n int) time.Duration, o outage) bool {
	lost := 0
	for n := 1; n <= p.MaxDeliveryAttempts; n++ {
		at := at(n)
		switch {
		case o.down(at):
			continue // the store is unreachable: 503, nack
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

// answer replays one delivery's phases, each stalled to its bound, and
// reports whether the answer reaches Pub/Sub while it still waits.
func answer(p Plan) bool {
	t := time.Duration(0)
	for _, phase := range []time.Duration{p.StoreTimeout, p.WorkDeadline, p.StoreTimeout, p.StoreTimeout} {
		t += phase // claim, work, complete (with retries), unknown mark
	}
	return t <= p.AckDeadline && t <= p.RequestTimeout
}

// late delivers a processed message again and again, every answer lost: the
// done record was written at 0, delivery k+1 is sent when delivery k's ack
// deadline ran out plus a backoff, each delivery's claim lands just before its
// own ack deadline ends (the request may wait in transit or in Cloud Run's
// queue), and a dead letter's replay is claimed just before the replay window
// closes. It reports false when some claim finds the record expired (at or
// after expires_at, when the store lets it be claimed afresh).
func late(p Plan, strategy string, rng *rand.Rand) bool {
	const eps = time.Nanosecond
	expiresAt := p.TTL // done at 0
	t, d := time.Duration(0), p.MinBackoff
	for n := 1; n <= p.MaxDeliveryAttempts; n++ {
		if t+p.AckDeadline-eps >= expiresAt {
			return false
		}
		var b time.Duration
		switch strategy {
		case "max":
			b = p.MaxBackoff
		case "min":
			b = p.MinBackoff
		case "doubling":
			b, d = min(d, p.MaxBackoff), min(2*d, p.MaxBackoff)
		case "random":
			b = p.MinBackoff + time.Duration(rng.Int64N(int64(p.MaxBackoff-p.MinBackoff)+1))
		}
		if n < p.MaxDeliveryAttempts {
			t += p.AckDeadline + b
		}
	}
	if p.DeadLetterReplayWindow > 0 {
		replay := t + p.AckDeadline + p.DeadLetterReplayWindow - eps
		return replay < expiresAt
	}
	return true
}

func simulate(p Plan, sc scenario) outcome {
	const eps = time.Nanosecond
	k := &key{leaseExpiry: p.Lease, expiresAt: p.Lease + p.TTL} // claimed at 0
	switch sc.kind {
	case "answer":
		if !answer(p) {
			return redelivery
		}
	case "late":
		if !late(p, sc.backoff, rand.New(rand.NewPCG(uint64(p.TTL), uint64(p.MaxDeliveryAttempts)))) {
			return repeated
		}
	case "live":
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
	out := []scenario{{kind: "live"}, {kind: "zombie"}, {kind: "crash"}, {kind: "answer"}, {kind: "late", backoff: "max"}}
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
				for _, ttl := range []time.Duration{s, 30 * s, time.Hour, 48 * time.Hour} {
					for _, grace := range []time.Duration{10 * s, 30 * s} {
						for _, ack := range []time.Duration{10 * s, 60 * s, 600 * s} {
							for _, minB := range []time.Duration{s, 10 * s, 60 * s} {
								for _, n := range []int{5, 15, 93, 100} {
									for _, rt := range []time.Duration{60 * s, 300 * s} {
										// The store timeout goes with the request timeout, so
										// both limits of invariant 5 bind somewhere in the grid.
										st := map[time.Duration]time.Duration{60 * s: 500 * time.Millisecond, 300 * s: 5 * s}[rt]
										if !yield(Plan{Lease: lease, TTL: ttl, Heartbeat: hb, WorkDeadline: wd, ShutdownGrace: grace,
											AckDeadline: ack, MinBackoff: minB, MaxBackoff: 600 * s, MaxDeliveryAttempts: n, RequestTimeout: rt, StoreTimeout: st}) {
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
	for _, o := range []outcome{overlap, refenced, deadLetter, redelivery, repeated} {
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
		reported[map[int]outcome{1: overlap, 2: refenced, 3: deadLetter, 4: repeated, 5: redelivery}[v.Invariant]] = true
	}
	for _, o := range []outcome{refenced, overlap, redelivery, repeated} {
		if got := slices.Contains(failed, o); got != reported[o] {
			t.Errorf("plan %+v: simulation %s=%v, Validate says %v", p, o, got, err)
		}
	}
	crash := simulate(p, scenario{kind: "crash"}) == deadLetter
	if crash != reported[deadLetter] {
		t.Errorf("plan %+v: crash scenario dead-letters=%v, Validate says %v", p, crash, fmt.Sprint(err))
	}
}

// TestHorizonSurvivesLateRedeliveries checks invariant 4 against the delivery
// simulation alone, over retry policies, attempts, replay windows and TTLs on
// both sides of each plan's horizon: a plan Validate accepts survives every
// backoff strategy, and Validate reports invariant 4 exactly when the longest
// strategy (every retry at the maximum backoff) finds an expired record.
func TestHorizonSurvivesLateRedeliveries(t *testing.T) {
	checked, refused := 0, 0
	for _, ack := range []time.Duration{10 * s, 60 * s, 600 * s} {
		for _, minB := range []time.Duration{s, 10 * s, 60 * s} {
			for _, maxB := range []time.Duration{60 * s, 600 * s} {
				for _, n := range []int{5, 15, 93, 100} {
					for _, window := range []time.Duration{0, time.Hour, 7 * 24 * time.Hour} {
						p := Plan{Lease: 5 * s, WorkDeadline: 4 * s, StoreTimeout: 2 * s, AckDeadline: ack,
							MinBackoff: minB, MaxBackoff: maxB, MaxDeliveryAttempts: n, DeadLetterReplayWindow: window}
						h := time.Duration(n)*ack + time.Duration(n-1)*maxB + window // the closed form, for the TTLs to try
						for _, ttl := range []time.Duration{time.Hour, h - ns, h, h + ns, 48 * time.Hour, 60 * 24 * time.Hour} {
							p.TTL = ttl
							checked++
							inv4 := false
							var pe *PlanError
							if errors.As(p.Validate(), &pe) {
								for _, v := range pe.Violations {
									inv4 = inv4 || v.Invariant == 4
								}
							}
							if inv4 {
								refused++
							}
							if got := !late(p, "max", nil); got != inv4 {
								t.Errorf("plan %+v: longest redeliveries find the record expired=%v, Validate reports invariant 4=%v", p, got, inv4)
							}
							if inv4 {
								continue
							}
							rng := rand.New(rand.NewPCG(uint64(n), uint64(ttl)))
							for _, strategy := range []string{"min", "doubling", "random", "random", "random"} {
								if !late(p, strategy, rng) {
									t.Fatalf("plan %+v passes invariant 4 but %s backoffs find the record expired", p, strategy)
								}
							}
						}
					}
				}
			}
		}
	}
	if refused == 0 || refused == checked {
		t.Errorf("%d of %d plans refused: the grid does not straddle the horizon", refused, checked)
	}
}

// crashed returns the key as the crash scenario sc leaves it (see simulate).
func crashed(p Plan, sc scenario) *key {
	const eps = time.Nanosecond
	k := &key{leaseExpiry: p.Lease, expiresAt: p.Lease + p.TTL}
	for n := 1; n <= sc.crashAfter; n++ {
		at := time.Duration(n) * p.Heartbeat
		if n == sc.crashAfter {
			at += p.Heartbeat - eps
		}
		k.renew(at, p)
	}
	return k
}

// TestStoreOutageRideOut checks Attempts.RideOut against the delivery
// simulation, the outage placed anywhere in the duplicate's life (before,
// inside and after the wait behind a crashed holder, on and between delivery
// times): an outage of RideOut never dead-letters it, and without a heartbeat
// (where the simulated wait is exactly W) one a nanosecond longer, placed
// worst, does. The doubling model's RideOutDoubling is checked the same way
// with the outage following the wait, the placement it models.
func TestStoreOutageRideOut(t *testing.T) {
	const eps = time.Nanosecond
	checked := 0
	for _, lease := range []time.Duration{10 * s, 60 * s, 90 * s, 5 * m} {
		for _, hb := range []time.Duration{0, 10 * s, 20 * s} {
			for _, minB := range []time.Duration{s, 7 * s, 10 * s, 60 * s} {
				for _, n := range []int{5, 15, 40, 100} {
					p := Plan{Lease: lease, Heartbeat: hb, WorkDeadline: min(lease-s, 60*s), MinBackoff: minB,
						MaxBackoff: 600 * s, MaxDeliveryAttempts: n, TTL: 48 * time.Hour, AckDeadline: 600 * s, StoreTimeout: 2 * s}
					a := p.Attempts()
					if a.Required > n {
						if a.RideOut != 0 {
							t.Errorf("%+v: attempts short of the wait, RideOut %s", p, a.RideOut)
						}
						continue
					}
					r := a.RideOut
					var places []time.Duration
					for k := range n + 1 {
						at := time.Duration(k) * minB
						places = append(places, at, at+eps, at+minB/2, max(at-eps, 0))
					}
					places = append(places, a.Wait, a.Wait+eps)
					worst := time.Duration(ConservativeAttempts(a.Wait, minB)-1+Margin) * minB // just past the wait and the margin
					places = append(places, worst)
					for _, sc := range scenarios(p) {
						if sc.kind != "crash" {
							continue
						}
						k0 := crashed(p, sc)
						for _, from := range places {
							k := *k0
							if !duplicateAt(p, &k, 0, func(i int) time.Duration { return time.Duration(i-1) * minB }, outage{from, r}) {
								t.Fatalf("plan %+v, %+v: an outage of RideOut %s from %s dead-letters the duplicate", p, sc, r, from)
							}
							checked++
						}
					}
					if hb == 0 {
						k := crashed(p, scenario{kind: "crash"})
						if duplicateAt(p, k, 0, func(i int) time.Duration { return time.Duration(i-1) * minB }, outage{worst, r + eps}) {
							t.Errorf("plan %+v: an outage of RideOut %s + 1ns from %s does not dead-letter: RideOut is not tight", p, r, worst)
						}
						// Doubling: the outage right after the wait.
						dbl := func(i int) time.Duration { return DoublingSpan(i, minB, p.MaxBackoff) }
						k = crashed(p, scenario{kind: "crash"})
						if a.RideOutDoubling > 0 && !duplicateAt(p, k, 0, dbl, outage{a.Wait, a.RideOutDoubling}) {
							t.Errorf("plan %+v: doubling delays and an outage of RideOutDoubling %s after the wait dead-letter", p, a.RideOutDoubling)
						}
						k = crashed(p, scenario{kind: "crash"})
						if duplicateAt(p, k, 0, dbl, outage{a.Wait, a.RideOutDoubling + eps}) {
							t.Errorf("plan %+v: doubling delays survive an outage past RideOutDoubling %s", p, a.RideOutDoubling)
						}
					}
				}
			}
		}
	}
	if checked < 10000 {
		t.Errorf("only %d placements checked", checked)
	}
}
