package sizing

import (
	"math"
	"time"
)

// Margin is the number of delivery attempts the conservative model adds to
// ⌈W / MinBackoff⌉ + 1. It leaves room for two deliveries lost to causes other
// than the wait: a store call that fails (the gateway fails closed with 503),
// an instance that stops answering until the ack deadline, or a delivery that
// reads the lease live an instant before it lapses because clocks differ.
const Margin = 2

// Unbounded is what ConservativeAttempts and DoublingAttempts return when no
// finite number of attempts suffices (a minimum backoff of zero or less).
const Unbounded = math.MaxInt

// Attempts is the attempts model of a plan: the conservative bound that
// Validate enforces and the doubling model reported beside it, and how long a
// store outage the plan's MaxDeliveryAttempts ride out.
type Attempts struct {
	// Wait is W, the longest a healthy message can be nacked while it waits
	// behind a live or crashed holder of its key (see Plan.Wait).
	Wait time.Duration
	// Outage is the store outage the plan budgets (Plan.StoreOutage): while
	// the store is unreachable every delivery is nacked (503 for push, a nack
	// for pull), so each one is spent.
	Outage time.Duration
	// Conservative is ⌈Wait / MinBackoff⌉ + 1 + ⌈Outage / MinBackoff⌉: the
	// delivery count when every delay equals the minimum backoff, counting the
	// holder's own delivery, plus the most deliveries an outage can spend.
	// The outage may come at any time in the message's life, not only right
	// after the wait, so its deliveries are counted on their own (an interval
	// of length Outage holds at most ⌈Outage / MinBackoff⌉ of them). Pub/Sub's
	// backoff formula is undocumented and best-effort, so this is the bound to
	// trust.
	Conservative int
	// Doubling is the delivery count, counting the holder's, when delays start
	// at the minimum backoff and double up to the maximum backoff and the
	// outage follows the wait (Wait + Outage nacked in one stretch). It is a
	// model, not a guarantee.
	Doubling int
	// Required is Conservative + Margin: the smallest MaxDeliveryAttempts
	// Validate accepts for the plan (invariant 3).
	Required int
	// RideOut is the longest store outage the plan's MaxDeliveryAttempts
	// ride out in the conservative model without dead-lettering a healthy
	// message: the attempts beyond what the wait and Margin need
	// (⌈Wait / MinBackoff⌉ + 1 + Margin), each one minimum backoff of
	// outage. Zero when there are none. Validate accepts StoreOutage up to
	// RideOut exactly.
	RideOut time.Duration
	// RideOutDoubling is RideOut in the doubling model: the time of delivery
	// MaxDeliveryAttempts − Margin (DoublingSpan) less Wait, or zero. A model,
	// not a guarantee.
	RideOutDoubling time.Duration
}

// Wait returns W, the longest a healthy message can wait behind a holder of
// its key before it can be claimed; a duplicate (the same key published twice)
// can arrive just after the holder claimed. The model: the work runs at most
// WorkDeadline; a heartbeat issues renewals every Heartbeat while the work
// runs, each taking effect within one interval of being issued.
//
// Without a heartbeat a live holder finishes within WorkDeadline and a crashed
// one frees the key when its lease lapses, so W is Lease (which invariant 1
// makes longer than WorkDeadline). With a heartbeat the last renewal is issued
// before the work deadline and takes effect within one more interval, so a
// holder that dies then keeps the key until WorkDeadline + Heartbeat + Lease,
// which is W. Negative fields count as zero; the sum saturates. W does not
// include StoreOutage (see Attempts).
func (p Plan) Wait() time.Duration {
	lease := max(p.Lease, 0)
	if p.Heartbeat > 0 {
		return addDur(addDur(max(p.WorkDeadline, 0), p.Heartbeat), lease)
	}
	return lease
}

// Attempts returns the attempts model of p with defaults applied (a zero
// MinBackoff means DefaultMinBackoff, and so on).
func (p Plan) Attempts() Attempts {
	r := p.WithDefaults()
	w, o := r.Wait(), max(r.StoreOutage, 0)
	c := conservative(w, o, r.MinBackoff)
	a := Attempts{
		Wait:         w,
		Outage:       o,
		Conservative: c,
		Doubling:     DoublingAttempts(addDur(w, o), r.MinBackoff, r.MaxBackoff),
		Required:     satAdd(c, Margin),
	}
	n := r.MaxDeliveryAttempts
	if r.MinBackoff > 0 && n > 0 {
		if spare := n - satAdd(ConservativeAttempts(w, r.MinBackoff), Margin); spare > 0 {
			a.RideOut = mulDur(r.MinBackoff, spare)
		}
		if n > Margin {
			a.RideOutDoubling = max(DoublingSpan(n-Margin, r.MinBackoff, r.MaxBackoff)-w, 0)
		}
	}
	return a
}

// conservative returns ⌈wait / minBackoff⌉ + 1 + ⌈outage / minBackoff⌉
// (Attempts.Conservative), Unbounded when minBackoff ≤ 0, saturating.
func conservative(wait, outage, minBackoff time.Duration) int {
	c := ConservativeAttempts(wait, minBackoff)
	if c == Unbounded {
		return c
	}
	return satAdd(c, ConservativeAttempts(outage, minBackoff)-1)
}

// ConservativeAttempts returns ⌈wait / minBackoff⌉ + 1, the number of
// deliveries of one message when the first lands at the start of the wait and
// every later one follows the previous after exactly minBackoff; the last is
// the first at or after the end of the wait. A wait of zero or less gives 1.
// It returns Unbounded when minBackoff ≤ 0, and saturates at Unbounded.
func ConservativeAttempts(wait, minBackoff time.Duration) int {
	if minBackoff <= 0 {
		return Unbounded
	}
	if wait <= 0 {
		return 1
	}
	n := int64(wait / minBackoff)
	if wait%minBackoff != 0 {
		n++
	}
	return satAdd(int(n), 1)
}

// DoublingAttempts returns the number of deliveries of one message until the
// first at or after the end of wait, when the first lands at the start of the
// wait and the k-th delay is minBackoff·2^(k−1) capped at maxBackoff (a
// maxBackoff below minBackoff counts as minBackoff). A wait of zero or less
// gives 1. It returns Unbounded when minBackoff ≤ 0, and saturates at Unbounded.
func DoublingAttempts(wait, minBackoff, maxBackoff time.Duration) int {
	if minBackoff <= 0 {
		return Unbounded
	}
	maxBackoff = max(maxBackoff, minBackoff)
	n, t, d := 1, time.Duration(0), minBackoff
	for t < wait {
		if d >= maxBackoff {
			// Every remaining delay is maxBackoff: finish in closed form.
			return satAdd(n, ConservativeAttempts(wait-t, maxBackoff)-1)
		}
		t += d
		n++
		if d > maxBackoff/2 {
			d = maxBackoff
		} else {
			d *= 2
		}
	}
	return n
}

// DoublingSpan returns the time of delivery n after the first in the
// doubling model of DoublingAttempts (0 for n ≤ 1): the sum of the first n − 1
// delays, minBackoff·2^(k−1) capped at maxBackoff (a maxBackoff below
// minBackoff counts as minBackoff). DoublingAttempts(w, …) is the least n with
// DoublingSpan(n, …) ≥ w. It returns 0 when minBackoff ≤ 0, and saturates.
func DoublingSpan(n int, minBackoff, maxBackoff time.Duration) time.Duration {
	if minBackoff <= 0 || n <= 1 {
		return 0
	}
	maxBackoff = max(maxBackoff, minBackoff)
	t, d := time.Duration(0), minBackoff
	for k := 1; k < n; k++ {
		if d >= maxBackoff {
			// Every remaining delay is maxBackoff: finish in closed form.
			return addDur(t, mulDur(maxBackoff, n-k))
		}
		t = addDur(t, d)
		if d > maxBackoff/2 {
			d = maxBackoff
		} else {
			d *= 2
		}
	}
	return t
}

// MinBackoffFor returns the smallest whole-second minimum backoff at which the
// conservative model needs at most attempts deliveries, Margin included, to
// cover wait. When attempts ≤ Margin + 1 no backoff suffices and it returns
// 0; when wait ≤ 0 any backoff does and it returns one second. A result above
// RetryBackoffMax means no valid retry policy fits.
func MinBackoffFor(wait time.Duration, attempts int) time.Duration {
	return minBackoffFor(wait, 0, attempts)
}

// minBackoffFor is MinBackoffFor for a wait and a store outage counted apart
// (Attempts.Conservative). The answer for an outage is found by a search up to
// one second past RetryBackoffMax, which is returned when nothing up to the cap
// fits.
func minBackoffFor(wait, outage time.Duration, attempts int) time.Duration {
	if attempts <= 1+Margin {
		return 0
	}
	if wait <= 0 && outage <= 0 {
		return time.Second
	}
	// ⌈wait / m⌉ ≤ slots exactly when m × slots ≥ wait, so the least m is
	// ⌈wait / slots⌉ (divided without overflow), then rounded up to seconds.
	slots := time.Duration(attempts - 1 - Margin) // intervals of minBackoff that fit
	total := addDur(max(wait, 0), max(outage, 0))
	m := total / slots
	if total%slots != 0 {
		m++
	}
	m = max(ceilSecond(m), time.Second)
	if outage <= 0 {
		return m
	}
	// ⌈w/m⌉ + ⌈o/m⌉ ≥ (w + o) / m, so m is a lower bound; step up from it.
	for ; m <= RetryBackoffMax; m += time.Second {
		if satAdd(conservative(wait, outage, m), Margin) <= attempts {
			return m
		}
	}
	return RetryBackoffMax + time.Second
}

// satAdd adds two non-negative ints, saturating at Unbounded.
func satAdd(a, b int) int {
	if a > Unbounded-b {
		return Unbounded
	}
	return a + b
}
