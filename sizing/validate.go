package sizing

import (
	"fmt"
	"time"
)

// Validate applies the defaults (WithDefaults) and checks the result: the
// documented Pub/Sub and Cloud Run ranges, a work deadline that fits the ack
// deadline and the request timeout, and invariants 1–3 (see the package
// documentation). It returns nil for a safe plan, or a *PlanError listing
// every violation as one sentence naming the numbers and the fix.
func (p Plan) Validate() error {
	var c checker
	r := p.WithDefaults()
	c.signs(p)
	c.ranges(r)
	c.deadlines(r)
	c.invariants(r)
	if len(c.vs) == 0 {
		return nil
	}
	return &PlanError{Violations: c.vs}
}

type checker struct{ vs []Violation }

func (c *checker) add(field, format string, args ...any) {
	c.vs = append(c.vs, Violation{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Prose names of the fields, as the sentences use them.
var prose = map[string]string{
	"Lease":               "Lease",
	"TTL":                 "TTL",
	"Heartbeat":           "Heartbeat",
	"WorkDeadline":        "Work deadline",
	"ShutdownGrace":       "Shutdown grace",
	"AckDeadline":         "Subscription ack deadline",
	"MinBackoff":          "Retry policy minimum backoff",
	"MaxBackoff":          "Retry policy maximum backoff",
	"MaxDeliveryAttempts": "Dead-letter max delivery attempts",
	"RequestTimeout":      "Cloud Run request timeout",
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
		c.add("AckDeadline", "Subscription ack deadline must be 10s–600s (got %s); raise it or leave zero for the default", fmtDur(r.AckDeadline))
	case r.AckDeadline > AckDeadlineMax:
		c.add("AckDeadline", "Subscription ack deadline must be 10s–600s (got %s); lower it or leave zero for the default", fmtDur(r.AckDeadline))
	case r.AckDeadline%time.Second != 0:
		c.add("AckDeadline", "Subscription ack deadline must be whole seconds (got %s); use %s", fmtDur(r.AckDeadline), fmtDur(ceilSecond(r.AckDeadline)))
	}
	if r.MinBackoff > RetryBackoffMax {
		c.add("MinBackoff", "Retry policy minimum backoff must be 0s–600s (got %s); lower it or leave zero for the default 10s", fmtDur(r.MinBackoff))
	}
	if r.MaxBackoff > RetryBackoffMax {
		c.add("MaxBackoff", "Retry policy maximum backoff must be 0s–600s (got %s); lower it or leave zero for the default 600s", fmtDur(r.MaxBackoff))
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
		c.add("RequestTimeout", "Cloud Run request timeout must be at most 3600s (got %s); lower it or leave zero for the default", fmtDur(r.RequestTimeout))
	}
}

// deadlines reports a work deadline that outlasts the push request: Pub/Sub
// gives up after the ack deadline and Cloud Run after the request timeout.
func (c *checker) deadlines(r Plan) {
	wd := r.WorkDeadline
	if wd <= 0 {
		return
	}
	if r.AckDeadline >= AckDeadlineMin && r.AckDeadline <= AckDeadlineMax && wd > r.AckDeadline {
		if wd > AckDeadlineMax {
			c.add("WorkDeadline", "Work deadline %s exceeds the subscription ack deadline %s, so every such delivery is redelivered while it runs; lower the work deadline to at most 600s, Pub/Sub's ack deadline cap", fmtDur(wd), fmtDur(r.AckDeadline))
		} else {
			c.add("AckDeadline", "Work deadline %s exceeds the subscription ack deadline %s, so every such delivery is redelivered while it runs; raise the ack deadline to at least %s or lower the work deadline", fmtDur(wd), fmtDur(r.AckDeadline), fmtDur(ceilSecond(wd)))
		}
	}
	if r.RequestTimeout > 0 && r.RequestTimeout <= RequestTimeoutMax && wd > r.RequestTimeout {
		c.add("RequestTimeout", "Work deadline %s exceeds the Cloud Run request timeout %s, so Cloud Run answers 504 while the work still runs; raise the request timeout to at least %s or lower the work deadline", fmtDur(wd), fmtDur(r.RequestTimeout), fmtDur(wd))
	}
}

// invariants reports violations of invariants 1–3.
func (c *checker) invariants(r Plan) {
	if r.Lease <= 0 || r.WorkDeadline <= 0 || r.Heartbeat < 0 {
		return
	}
	// Invariant 1: the lease outlives the work, or a heartbeat renews it.
	switch {
	case r.Heartbeat == 0 && r.Lease <= r.WorkDeadline:
		c.add("Lease", "Lease %s must exceed the work deadline %s when no heartbeat renews it (invariant 1); raise the lease above %s or set a heartbeat of at most a third of the lease", fmtDur(r.Lease), fmtDur(r.WorkDeadline), fmtDur(r.WorkDeadline))
	case r.Heartbeat > 0 && r.Heartbeat > r.Lease/3:
		c.add("Heartbeat", "Heartbeat %s must be at most a third of the lease %s so a failed renewal is retried before the lease lapses (invariant 1); lower it to %s or raise the lease to %s", fmtDur(r.Heartbeat), fmtDur(r.Lease), fmtDur(r.Lease/3), fmtDur(addDur(r.Heartbeat, addDur(r.Heartbeat, r.Heartbeat))))
	}
	// Invariant 2: lease + ttl outlives the longest a holder can live.
	if r.TTL > 0 && r.ShutdownGrace >= 0 {
		life := addDur(r.WorkDeadline, r.ShutdownGrace)
		if addDur(r.Lease, r.TTL) <= life {
			c.add("TTL", "Lease %s plus TTL %s must exceed the work deadline %s plus shutdown grace %s, the longest a holder can live (invariant 2); raise the TTL above %s", fmtDur(r.Lease), fmtDur(r.TTL), fmtDur(r.WorkDeadline), fmtDur(r.ShutdownGrace), fmtDur(life-r.Lease))
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
	if a.Required <= DeliveryAttemptsMax {
		c.add("MaxDeliveryAttempts", "Dead-letter max delivery attempts %d cannot cover a wait of %s behind %s: with every retry at the %s minimum backoff it needs %d (invariant 3); raise it to %d or leave zero to size it", n, fmtDur(a.Wait), behind, fmtDur(r.MinBackoff), a.Required, a.Required)
		return
	}
	fix := "shorten the lease"
	if r.Heartbeat > 0 {
		fix = "shorten the lease or the work deadline"
	}
	if m := MinBackoffFor(a.Wait, DeliveryAttemptsMax); m <= RetryBackoffMax {
		fix = fmt.Sprintf("raise the minimum backoff to at least %s with %d attempts, or %s", fmtDur(m), DeliveryAttemptsMax, fix)
	} else {
		fix = "no minimum backoff up to 600s fits; " + fix
	}
	c.add("MinBackoff", "Dead-letter max delivery attempts %d cannot cover a wait of %s behind %s: with every retry at the %s minimum backoff it needs %d, over Pub/Sub's cap of 100 (invariant 3); %s", n, fmtDur(a.Wait), behind, fmtDur(r.MinBackoff), a.Required, fix)
}
