package sizing

import (
	"fmt"
	"time"
)

// Validate applies the defaults (WithDefaults) and checks the result: the
// documented Pub/Sub and Cloud Run ranges, a time budget that fits the ack
// deadline and the request timeout (invariant 5), and invariants 1–4 (see the
// package documentation). It returns nil for a safe plan, or a *PlanError listing
// every violation as one sentence naming the numbers and the fix.
func (p Plan) Validate() error {
	var c checker
	r := p.WithDefaults()
	c.signs(p)
	c.ranges(r)
	c.deadlines(r)
	c.invariants(r)
	c.horizon(r)
	if len(c.vs) == 0 {
		return nil
	}
	return &PlanError{Violations: c.vs}
}

type checker struct{ vs []Violation }

func (c *checker) add(field, format string, args ...any) { c.addInv(0, field, format, args...) }

func (c *checker) addInv(inv int, field, format string, args ...any) {
	c.vs = append(c.vs, Violation{Field: field, Message: fmt.Sprintf(format, args...), Invariant: inv})
}

// Prose names of the fields, as the sentences use them.
var prose = map[string]string{
	"Lease":                  "Lease",
	"TTL":                    "TTL",
	"Heartbeat":              "Heartbeat",
	"WorkDeadline":           "Work deadline",
	"ShutdownGrace":          "Shutdown grace",
	"AckDeadline":            "Subscription ack deadline",
	"MinBackoff":             "Retry policy minimum backoff",
	"MaxBackoff":             "Retry policy maximum backoff",
	"MaxDeliveryAttempts":    "Dead-letter max delivery attempts",
	"RequestTimeout":         "Cloud Run request timeout",
	"StoreTimeout":           "Store timeout",
	"DeadLetterReplayWindow": "Dead-letter replay window",
	"StoreOutage":            "Store outage",
}

// signs reports negative fields and the required fields left zero.
func (c *checker) signs(p Plan) {
	for _, f := range []struct {
		name string
		v    time.Duration
		zero string
	}{
		{"Lease", p.Lease, ""},
		{"TTL", p.TTL, "zero for the default"},
		{"Heartbeat", p.Heartbeat, "zero for no heartbeat"},
		{"WorkDeadline", p.WorkDeadline, ""},
		{"ShutdownGrace", p.ShutdownGrace, "zero for the default"},
		{"AckDeadline", p.AckDeadline, "zero for the default"},
		{"MinBackoff", p.MinBackoff, "zero for the default"},
		{"MaxBackoff", p.MaxBackoff, "zero for the default"},
		{"RequestTimeout", p.RequestTimeout, "zero for the default"},
		{"StoreTimeout", p.StoreTimeout, "zero for the default"},
		{"DeadLetterReplayWindow", p.DeadLetterReplayWindow, "zero for no replay"},
		{"StoreOutage", p.StoreOutage, "zero for none budgeted"},
	} {
		switch {
		case f.v < 0 && f.zero != "":
			c.add(f.name, "%s must not be negative (got %s); use a positive duration or %s", prose[f.name], fmtDur(f.v), f.zero)
		case f.v < 0:
			c.add(f.name, "%s must be positive (got %s); set a positive duration", prose[f.name], fmtDur(f.v))
		}
	}
	if p.Lease == 0 {
		c.add("Lease", "Lease must be set (got 0s); set it above the work deadline, or set a heartbeat and a lease at least three times it")
	}
	if p.WorkDeadline == 0 {
		c.add("WorkDeadline", "Work deadline must be set (got 0s); set the longest the guarded work may run, at most the ack deadline")
	}
	if p.MaxDeliveryAttempts < 0 {
		c.add("MaxDeliveryAttempts", "Dead-letter max delivery attempts must not be negative (got %d); use %d–%d or zero to size it", p.MaxDeliveryAttempts, DeliveryAttemptsMin, DeliveryAttemptsMax)
	}
}

// ranges reports values outside the documented Pub/Sub and Cloud Run ranges.
func (c *checker) ranges(r Plan) {
	switch {
	case r.AckDeadline < 0:
	case r.AckDeadline < AckDeadlineMin:
		c.add("AckDeadline", "Subscription ack deadline must be 10s–600s (got %s); raise it or leave zero for the default", inSeconds(r.AckDeadline))
	case r.AckDeadline > AckDeadlineMax:
		c.add("AckDeadline", "Subscription ack deadline must be 10s–600s (got %s); lower it or leave zero for the default", inSeconds(r.AckDeadline))
	case r.AckDeadline%time.Second != 0:
		c.add("AckDeadline", "Subscription ack deadline must be whole seconds (got %s); use %s", fmtDur(r.AckDeadline), fmtDur(ceilSecond(r.AckDeadline)))
	}
	if r.MinBackoff > RetryBackoffMax {
		c.add("MinBackoff", "Retry policy minimum backoff must be 0s–600s (got %s); lower it or leave zero for the default 10s", inSeconds(r.MinBackoff))
	}
	if r.MaxBackoff > RetryBackoffMax {
		c.add("MaxBackoff", "Retry policy maximum backoff must be 0s–600s (got %s); lower it or leave zero for the default 600s", inSeconds(r.MaxBackoff))
	}
	if r.MinBackoff > 0 && r.MaxBackoff > 0 && r.MinBackoff <= RetryBackoffMax && r.MaxBackoff <= RetryBackoffMax && r.MinBackoff > r.MaxBackoff {
		c.add("MaxBackoff", "Retry policy minimum backoff %s exceeds the maximum backoff %s; raise the maximum to at least %s or lower the minimum", fmtDur(r.MinBackoff), fmtDur(r.MaxBackoff), fmtDur(r.MinBackoff))
	}
	switch n := r.MaxDeliveryAttempts; {
	case n < 0:
	case n < DeliveryAttemptsMin:
		c.add("MaxDeliveryAttempts", "Dead-letter max delivery attempts must be 5–100 (got %d); raise it or leave zero to size it", n)
	case n > DeliveryAttemptsMax:
		c.add("MaxDeliveryAttempts", "Dead-letter max delivery attempts must be 5–100 (got %d); lower it or leave zero to size it", n)
	}
	if r.RequestTimeout > RequestTimeoutMax {
		c.add("RequestTimeout", "Cloud Run request timeout must be at most 3600s (got %s); lower it or leave zero for the default", inSeconds(r.RequestTimeout))
	}
	if r.StoreTimeout > 0 && r.StoreTimeout < MinStoreTimeout {
		c.add("StoreTimeout", "Store timeout must be at least %s (got %s), or every store call of a healthy store times out; raise it or leave zero for the default %s", fmtDur(MinStoreTimeout), fmtDur(r.StoreTimeout), fmtDur(DefaultStoreTimeout))
	}
}

// deadlines reports a time budget that outlasts the push request (invariant
// 5): Pub/Sub stops waiting after the ack deadline (a later answer is a nack)
// and Cloud Run after the request timeout, so an answer for a processed
// message that comes later is a redelivery, which repeats the work when the
// record could be written neither done nor unknown.
func (c *checker) deadlines(r Plan) {
	wd, st := r.WorkDeadline, r.StoreTimeout
	if wd <= 0 || st < 0 {
		return
	}
	b := r.budget()
	parts := fmt.Sprintf("claim %s + work deadline %s + complete %s + unknown mark %s", fmtDur(st), fmtDur(wd), fmtDur(st), fmtDur(st))
	// lower names what fits within limit: a shorter work deadline, or a
	// shorter store timeout when one of at least MinStoreTimeout does.
	lower := func(limit time.Duration) string {
		stores := mulDur(st, StoreCallsPerDelivery)
		var alts []string
		if limit > stores {
			alts = append(alts, "the work deadline to "+fmtDown(limit-stores))
		}
		if limit > wd {
			if fit := (limit - wd) / StoreCallsPerDelivery; fit >= MinStoreTimeout {
				alts = append(alts, "the store timeout to "+fmtDown(fit))
			}
		}
		switch len(alts) {
		case 0:
			return ""
		case 1:
			return alts[0]
		}
		return alts[0] + " or " + alts[1]
	}
	if r.AckDeadline >= AckDeadlineMin && r.AckDeadline <= AckDeadlineMax && b > r.AckDeadline {
		if l := lower(r.AckDeadline); b > AckDeadlineMax {
			field := "WorkDeadline" // the larger part of the budget is the one to cut
			if wd < mulDur(st, StoreCallsPerDelivery) {
				field = "StoreTimeout"
			}
			if l == "" {
				l = "the work deadline and the store timeout"
			}
			c.addInv(5, field, "Time budget %s (%s) exceeds the subscription ack deadline %s, so the answer for a processed message can reach Pub/Sub after it gave up and redelivered (invariant 5); lower %s to fit Pub/Sub's 600s ack deadline cap", fmtDur(b), parts, fmtDur(r.AckDeadline), l)
		} else {
			if l != "" {
				l = ", or lower " + l
			}
			c.addInv(5, "AckDeadline", "Time budget %s (%s) exceeds the subscription ack deadline %s, so the answer for a processed message can reach Pub/Sub after it gave up and redelivered (invariant 5); raise the ack deadline to at least %s%s", fmtDur(b), parts, fmtDur(r.AckDeadline), fmtDur(ceilSecond(b)), l)
		}
	}
	if r.RequestTimeout > 0 && r.RequestTimeout <= RequestTimeoutMax && b > r.RequestTimeout {
		l := lower(r.RequestTimeout)
		if l != "" {
			l = ", or lower " + l
		}
		c.addInv(5, "RequestTimeout", "Time budget %s (%s) exceeds the Cloud Run request timeout %s, so Cloud Run answers 504 before the gateway's answer (invariant 5); raise the request timeout to at least %s%s", fmtDur(b), parts, fmtDur(r.RequestTimeout), fmtDur(ceilSecond(b)), l)
	}
}

// invariants reports violations of invariants 1–3 (4 is horizon's, 5 deadlines').
func (c *checker) invariants(r Plan) {
	if r.Lease <= 0 || r.WorkDeadline <= 0 || r.Heartbeat < 0 {
		return
	}
	// Invariant 1: the lease outlives the work, or a heartbeat renews it.
	switch {
	case r.Heartbeat == 0 && r.Lease <= r.WorkDeadline:
		c.addInv(1, "Lease", "Lease %s must exceed the work deadline %s when no heartbeat renews it (invariant 1); raise the lease above %s or set a heartbeat of at most a third of the lease", fmtDur(r.Lease), fmtDur(r.WorkDeadline), fmtDur(r.WorkDeadline))
	case r.Heartbeat > 0 && r.Heartbeat > r.Lease/3:
		c.addInv(1, "Heartbeat", "Heartbeat %s must be at most a third of the lease %s so a failed renewal is retried before the lease lapses (invariant 1); lower it to %s or raise the lease to %s", fmtDur(r.Heartbeat), fmtDur(r.Lease), fmtDown(r.Lease/3), fmtUp(mulDur(r.Heartbeat, 3)))
	}
	// Invariant 2: lease + ttl outlives the longest a holder can live.
	if r.TTL > 0 && r.ShutdownGrace >= 0 {
		life := addDur(r.WorkDeadline, r.ShutdownGrace)
		if addDur(r.Lease, r.TTL) <= life {
			c.addInv(2, "TTL", "Lease %s plus TTL %s must exceed the work deadline %s plus shutdown grace %s, the longest a holder can live (invariant 2); raise the TTL above %s", fmtDur(r.Lease), fmtDur(r.TTL), fmtDur(r.WorkDeadline), fmtDur(r.ShutdownGrace), fmtUp(life-r.Lease))
		}
	}
	// Invariant 3: the delivery attempts cover the wait behind a holder.
	n := r.MaxDeliveryAttempts
	if r.MinBackoff <= 0 || r.MinBackoff > RetryBackoffMax || n < DeliveryAttemptsMin || n > DeliveryAttemptsMax {
		return // reported by ranges
	}
	a := r.Attempts()
	if n >= a.Required {
		return
	}
	behind := "a crashed holder (the lease)"
	if r.Heartbeat > 0 {
		behind = "a holder that dies after its last renewal (work deadline plus heartbeat plus lease)"
	}
	if a.Outage > 0 {
		behind += " plus a store outage of " + fmtDur(a.Outage)
	}
	if a.Required <= DeliveryAttemptsMax {
		c.addInv(3, "MaxDeliveryAttempts", "Dead-letter max delivery attempts %d cannot cover a wait of %s behind %s: with every retry at the %s minimum backoff it needs %d (invariant 3); raise it to %d or leave zero to size it", n, fmtDur(a.Wait), behind, fmtDur(r.MinBackoff), a.Required, a.Required)
		return
	}
	fix := "shorten the lease"
	if r.Heartbeat > 0 {
		fix = "shorten the lease or the work deadline"
	}
	if a.Outage > 0 {
		fix += ", or budget a shorter store outage"
	}
	if m := minBackoffFor(a.Wait, a.Outage, DeliveryAttemptsMax); m <= RetryBackoffMax {
		fix = fmt.Sprintf("raise the minimum backoff to at least %s with %d attempts, or %s", fmtDur(m), DeliveryAttemptsMax, fix)
	} else {
		fix = "no minimum backoff up to 600s fits; " + fix
	}
	c.addInv(3, "MinBackoff", "Dead-letter max delivery attempts %d cannot cover a wait of %s behind %s: with every retry at the %s minimum backoff it needs %d, over Pub/Sub's cap of 100 (invariant 3); %s", n, fmtDur(a.Wait), behind, fmtDur(r.MinBackoff), a.Required, fix)
}

// horizon reports a TTL shorter than the redelivery horizon plus the
// dead-letter replay window (invariant 4): the done record would expire while
// Pub/Sub, or an operator replaying dead letters, may still deliver the
// message, and that delivery would run the work again.
func (c *checker) horizon(r Plan) {
	n := r.MaxDeliveryAttempts
	if r.TTL <= 0 || r.DeadLetterReplayWindow < 0 || r.AckDeadline <= 0 || r.MaxBackoff < 0 ||
		n < DeliveryAttemptsMin || n > DeliveryAttemptsMax {
		return // reported by signs and ranges
	}
	h := r.horizon()
	need := addDur(h, r.DeadLetterReplayWindow)
	if r.TTL >= need {
		return
	}
	what := fmt.Sprintf("the redelivery horizon %s (%d attempts × %s ack deadline + %d × %s max backoff)", fmtDur(h), n, fmtDur(r.AckDeadline), n-1, fmtDur(r.MaxBackoff))
	if r.DeadLetterReplayWindow > 0 {
		what += " plus the dead-letter replay window " + fmtDur(r.DeadLetterReplayWindow)
	}
	// The other way out: a shorter maximum backoff (never below the minimum),
	// or fewer attempts (never below what invariant 3 requires).
	var alts []string
	if room := r.TTL - r.DeadLetterReplayWindow; room > 0 { // both non-negative: no overflow
		if acks := mulDur(r.AckDeadline, n); n > 1 && room > acks {
			if mb := (room - acks) / time.Duration(n-1); mb >= r.MinBackoff && mb < r.MaxBackoff {
				alts = append(alts, "lower the max backoff to "+fmtDown(mb))
			}
		}
		// k attempts need k×ack + (k−1)×max ≤ TTL − window.
		if per := addDur(r.AckDeadline, r.MaxBackoff); per > 0 {
			k := int(min(addDur(room, r.MaxBackoff)/per, time.Duration(DeliveryAttemptsMax)))
			if k < n && k >= max(r.Attempts().Required, DeliveryAttemptsMin) {
				alts = append(alts, fmt.Sprintf("lower the max delivery attempts to %d", k))
			}
		}
	}
	fix := ""
	for _, a := range alts {
		fix += ", or " + a
	}
	c.addInv(4, "TTL", "TTL %s must be at least %s, or a late redelivery finds the done record expired and runs the work again (invariant 4); raise the TTL to at least %s%s", fmtDur(r.TTL), what, fmtUp(need), fix)
}

// inSeconds formats d as fmtDur does, with its length in seconds added when
// that reads differently ("20m = 1200s"), for ranges Google's docs state in
// seconds.
func inSeconds(d time.Duration) string {
	s := fmtDur(d)
	if d >= time.Minute && d%time.Second == 0 {
		s += fmt.Sprintf(" = %ds", int64(d/time.Second))
	}
	return s
}
