package sizing

import (
	"fmt"
	"strconv"
	"time"
)

// Recommend completes p into a plan that fits Pub/Sub's caps, or says why none
// exists. It reads p's Lease, WorkDeadline and Heartbeat, keeps every other
// field that is set unless it breaks an invariant that a larger value fixes,
// and:
//
//   - with Lease and Heartbeat both zero, uses RecommendedLease renewed every
//     RecommendedHeartbeat; with only Heartbeat set, a lease three times it;
//   - when the conservative model needs more than DeliveryAttemptsMax attempts
//     at the minimum backoff (DefaultMinBackoff if zero), raises the minimum
//     backoff to the smallest whole second that fits (MinBackoffFor), and the
//     maximum backoff with it if it would fall below;
//   - raises MaxDeliveryAttempts to Attempts.Required (at least
//     DeliveryAttemptsMin) when it is lower (invariant 3);
//   - raises an AckDeadline or a RequestTimeout below the time budget to the
//     budget in whole seconds, within Pub/Sub's and Cloud Run's caps
//     (invariant 5);
//   - raises a TTL below the redelivery horizon plus the replay window to that
//     sum rounded up to whole hours (invariant 4);
//   - fills every other zero field with its default (WithDefaults).
//
// The result is always returned with defaults applied. The error is nil for a
// safe plan, otherwise the *PlanError of Validate: each sentence says what to
// change (for example a work deadline so long that no minimum backoff up to
// 600 s covers the wait within 100 attempts). RecommendChanges also says what
// changed and why.
func Recommend(p Plan) (Plan, error) {
	r, _, err := RecommendChanges(p)
	return r, err
}

// Change is one field Recommend set or replaced.
type Change struct {
	// Field is the Plan field, e.g. "MaxDeliveryAttempts".
	Field string
	// From and To are the values before and after, durations formatted by
	// FormatDuration ("0s" or "0" for a field left zero).
	From, To string
	// Replaced is true when From was set explicitly (non-zero) and Recommend
	// replaced it, false when it filled a zero field.
	Replaced bool
	// Why is one clause saying why, e.g. "the conservative model needs 17
	// deliveries to cover a wait of 2m20s (invariant 3)".
	Why string
}

// RecommendChanges is Recommend, and also lists every field whose value in the
// result differs from p, in Plan field order, each with the reason.
func RecommendChanges(p Plan) (Plan, []Change, error) {
	r := p
	why := map[string]string{}
	if r.Lease == 0 {
		if r.Heartbeat == 0 {
			r.Lease, r.Heartbeat = RecommendedLease, RecommendedHeartbeat
			why["Lease"] = "a renewed 1m lease frees a crashed holder's key within a minute and keeps the dead-letter policy tight"
			why["Heartbeat"] = "renews the lease every third of it, so one failed renewal is retried in time (invariant 1)"
		} else if r.Heartbeat > 0 {
			r.Lease = mulDur(r.Heartbeat, 3)
			why["Lease"] = "three heartbeat intervals, the shortest lease the heartbeat keeps live (invariant 1)"
		}
	}
	if r.MinBackoff == 0 {
		r.MinBackoff = DefaultMinBackoff
	}
	if r.MinBackoff > 0 && r.MinBackoff <= RetryBackoffMax {
		w, o := r.Wait(), max(r.StoreOutage, 0)
		what := "a wait of " + fmtDur(w)
		if o > 0 {
			what += " plus a store outage of " + fmtDur(o)
		}
		if need := satAdd(conservative(w, o, r.MinBackoff), Margin); need > DeliveryAttemptsMax {
			if m := minBackoffFor(w, o, DeliveryAttemptsMax); m > r.MinBackoff && m <= RetryBackoffMax {
				why["MinBackoff"] = fmt.Sprintf("at %s the conservative model needs %d deliveries to cover %s, over Pub/Sub's cap of 100 (invariant 3)", fmtDur(r.MinBackoff), need, what)
				r.MinBackoff = m
				if r.MaxBackoff > 0 && r.MaxBackoff < m {
					r.MaxBackoff = m
					why["MaxBackoff"] = "the maximum backoff must be at least the raised minimum"
				}
			}
		}
		if req := max(satAdd(conservative(w, o, r.MinBackoff), Margin), DeliveryAttemptsMin); r.MaxDeliveryAttempts >= 0 && r.MaxDeliveryAttempts < req && req <= DeliveryAttemptsMax {
			r.MaxDeliveryAttempts = req
			why["MaxDeliveryAttempts"] = fmt.Sprintf("covers %s behind a holder with every retry at the %s minimum backoff, plus a margin of %d (invariant 3)", what, fmtDur(r.MinBackoff), Margin)
		}
	}
	d := r.WithDefaults()
	if b := d.budget(); d.WorkDeadline > 0 && d.StoreTimeout >= MinStoreTimeout {
		if fit := ceilSecond(b); d.AckDeadline > 0 && d.AckDeadline < b && fit <= AckDeadlineMax {
			r.AckDeadline = fit
			why["AckDeadline"] = "fits the time budget " + fmtDur(b) + " of claim, work, complete and unknown mark (invariant 5)"
		}
		if fit := ceilSecond(b); d.RequestTimeout > 0 && d.RequestTimeout < b && fit <= RequestTimeoutMax {
			r.RequestTimeout = fit
			why["RequestTimeout"] = "fits the time budget " + fmtDur(b) + " of claim, work, complete and unknown mark (invariant 5)"
		}
	}
	d = r.WithDefaults()
	if need := addDur(d.horizon(), max(d.DeadLetterReplayWindow, 0)); d.TTL > 0 && d.TTL < need && d.MaxDeliveryAttempts >= DeliveryAttemptsMin {
		r.TTL = 0 // resolves to the horizon plus the window, rounded up
		why["TTL"] = "must outlive the redelivery horizon " + fmtDur(need) + " (invariant 4)"
	}
	r = r.WithDefaults()
	return r, changes(p, r, why), r.Validate()
}

// defaultWhy says why a zero field resolves as it does (WithDefaults).
var defaultWhy = map[string]string{
	"TTL":                 "the redelivery horizon plus the replay window, rounded up to whole hours, at least 1h (invariant 4)",
	"ShutdownGrace":       "Cloud Run's 10s between SIGTERM and SIGKILL",
	"AckDeadline":         "the time budget of claim, work, complete and unknown mark in whole seconds, at least Pub/Sub's 10s (invariant 5)",
	"MinBackoff":          "Pub/Sub's default minimum backoff",
	"MaxBackoff":          "Pub/Sub's default maximum backoff",
	"MaxDeliveryAttempts": "the conservative requirement, within Pub/Sub's 5–100 (invariant 3)",
	"RequestTimeout":      "Cloud Run's default 300s, or the time budget when longer (invariant 5)",
	"StoreTimeout":        "the default bound of each store phase",
}

// changes lists the fields of r that differ from p.
func changes(p, r Plan, why map[string]string) []Change {
	var out []Change
	add := func(name, from, to string, set bool) {
		c := Change{Field: name, From: from, To: to, Replaced: set, Why: why[name]}
		if c.Why == "" {
			c.Why = defaultWhy[name]
		}
		out = append(out, c)
	}
	for _, f := range []struct {
		name     string
		from, to time.Duration
	}{
		{"Lease", p.Lease, r.Lease}, {"TTL", p.TTL, r.TTL}, {"Heartbeat", p.Heartbeat, r.Heartbeat},
		{"WorkDeadline", p.WorkDeadline, r.WorkDeadline}, {"ShutdownGrace", p.ShutdownGrace, r.ShutdownGrace},
		{"AckDeadline", p.AckDeadline, r.AckDeadline}, {"MinBackoff", p.MinBackoff, r.MinBackoff},
		{"MaxBackoff", p.MaxBackoff, r.MaxBackoff}, {"MaxDeliveryAttempts", 0, 0},
		{"RequestTimeout", p.RequestTimeout, r.RequestTimeout}, {"StoreTimeout", p.StoreTimeout, r.StoreTimeout},
		{"DeadLetterReplayWindow", p.DeadLetterReplayWindow, r.DeadLetterReplayWindow},
		{"StoreOutage", p.StoreOutage, r.StoreOutage},
	} {
		switch {
		case f.name == "MaxDeliveryAttempts" && p.MaxDeliveryAttempts != r.MaxDeliveryAttempts:
			add(f.name, strconv.Itoa(p.MaxDeliveryAttempts), strconv.Itoa(r.MaxDeliveryAttempts), p.MaxDeliveryAttempts != 0)
		case f.from != f.to:
			add(f.name, fmtDur(f.from), fmtDur(f.to), f.from != 0)
		}
	}
	return out
}
