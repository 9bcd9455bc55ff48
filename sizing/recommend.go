package sizing

// Recommend completes p into a plan that fits Pub/Sub's caps, or says why none
// exists. It reads p's Lease, WorkDeadline and Heartbeat, keeps every other
// field that is set, and:
//
//   - with Lease and Heartbeat both zero, uses RecommendedLease renewed every
//     RecommendedHeartbeat; with only Heartbeat set, a lease three times it;
//   - when the conservative model needs more than DeliveryAttemptsMax attempts
//     at the minimum backoff (DefaultMinBackoff if zero), raises the minimum
//     backoff to the smallest whole second that fits (MinBackoffFor), and the
//     maximum backoff with it if it would fall below;
//   - raises MaxDeliveryAttempts to Attempts.Required (at least
//     DeliveryAttemptsMin) when it is lower;
//   - fills every other zero field with its default (WithDefaults).
//
// The result is always returned with defaults applied. The error is nil for a
// safe plan, otherwise the *PlanError of Validate: each sentence says what to
// change (for example a work deadline so long that no minimum backoff up to
// 600 s covers the wait within 100 attempts).
func Recommend(p Plan) (Plan, error) {
	r := p
	if r.Lease == 0 {
		if r.Heartbeat == 0 {
			r.Lease, r.Heartbeat = RecommendedLease, RecommendedHeartbeat
		} else if r.Heartbeat > 0 {
			r.Lease = addDur(r.Heartbeat, addDur(r.Heartbeat, r.Heartbeat))
		}
	}
	if r.MinBackoff == 0 {
		r.MinBackoff = DefaultMinBackoff
	}
	if r.MinBackoff > 0 && r.MinBackoff <= RetryBackoffMax {
		w := r.Wait()
		if satAdd(ConservativeAttempts(w, r.MinBackoff), Margin) > DeliveryAttemptsMax {
			if m := MinBackoffFor(w, DeliveryAttemptsMax); m > r.MinBackoff && m <= RetryBackoffMax {
				r.MinBackoff = m
				if r.MaxBackoff > 0 && r.MaxBackoff < m {
					r.MaxBackoff = m
				}
			}
		}
		if req := max(satAdd(ConservativeAttempts(w, r.MinBackoff), Margin), DeliveryAttemptsMin); r.MaxDeliveryAttempts >= 0 && r.MaxDeliveryAttempts < req && req <= DeliveryAttemptsMax {
			r.MaxDeliveryAttempts = req
		}
	}
	r = r.WithDefaults()
	return r, r.Validate()
}
