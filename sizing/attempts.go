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
// Validate enforces and the doubling model reported beside it.
type Attempts struct {
	// Wait is W, the longest a healthy message can be nacked while it waits
	// behind a live or crashed holder of its key (see Plan.Wait).
	Wait time.Duration
	// Conservative is ⌈Wait / MinBackoff⌉ + 1: the delivery count when every
	// delay equals the minimum backoff, counting the holder's own delivery.
	// Pub/Sub's backoff formula is undocumented and best-effort, so this is
	// the bound to trust.
	Conservative int
	// Doubling is the delivery count when delays start at the minimum backoff
	// and double up to the maximum backoff. It is a model, not a guarantee.
	Doubling int
	// Required is Conservative + Margin: the smallest MaxDeliveryAttempts
	// Validate accepts for the plan (invariant 3).
	Required int
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
// which is W. Negative fields count as zero; the sum saturates.
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
	w := r.Wait()
	c := ConservativeAttempts(w, r.MinBackoff)
	return Attempts{
		Wait:         w,
		Conservative: c,
		Doubling:     DoublingAttempts(w, r.MinBackoff, r.MaxBackoff),
		Required:     satAdd(c, Margin),
	}
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

// MinBackoffFor returns the smallest whole-second minimum backoff at which the
// conservative model needs at most attempts deliveries, Margin included, to
// cover wait. When attempts ≤ Margin + 1 no backoff suffices and it returns
// 0; when wait ≤ 0 any backoff does and it returns one second. A result above
// RetryBackoffMax means no valid retry policy fits.
func MinBackoffFor(wait time.Duration, attempts int) time.Duration {
	if attempts <= 1+Margin {
		return 0
	}
	if wait <= 0 {
		return time.Second
	}
	// ⌈wait / m⌉ ≤ slots exactly when m × slots ≥ wait, so the least m is
	// ⌈wait / slots⌉ (divided without overflow), then rounded up to seconds.
	slots := time.Duration(attempts - 1 - Margin) // intervals of minBackoff that fit
	m := wait / slots
	if wait%slots != 0 {
		m++
	}
	return ceilSecond(m)
}

// satAdd adds two non-negative ints, saturating at Unbounded.
func satAdd(a, b int) int {
	if a > Unbounded-b {
		return Unbounded
	}
	return a + b
}
