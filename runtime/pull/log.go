package pull

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/oncegate/oncegate/runtime/gate"
)

// logResult writes the message's one line at the level its outcome deserves,
// like the push adapter: info for an ack that needs no attention, one warning
// line for an expected retry (in-progress, stopping), error for the rest
// (fenced-out carries alert=true; unknown says "reconcile key …"). Attributes:
// key, fence, outcome, ack (plus adapter, mode, message_id and delivery_attempt
// from the logger); never payload bytes.
func (r *Receiver) logResult(log *slog.Logger, res result) {
	level, msg := slog.LevelError, ""
	var extra []any
	switch res.outcome {
	case gate.OutcomeRan.String():
		level, msg = slog.LevelInfo, "oncegate: ran; acked"
	case gate.OutcomeDuplicate.String():
		level, msg = slog.LevelInfo, "oncegate: duplicate skipped; acked"
	case gate.OutcomeInProgress.String():
		level, msg = slog.LevelWarn, "oncegate: key in progress elsewhere; nacked for redelivery"
	case OutcomeStopping:
		level, msg = slog.LevelWarn, "oncegate: received while stopping; nacked without a claim"
	case OutcomeNoKey:
		msg = "oncegate: no key resolvable; nacked without a claim (fail closed)"
	case gate.OutcomeBodyFailed.String():
		msg = "oncegate: body failed; nacked for redelivery"
	case gate.OutcomePermanent.String():
		msg = "oncegate: body failed permanently; recorded failed and acked"
	case gate.OutcomeNotRecorded.String():
		msg = "oncegate: body ran but the done record was not written; acked so the effect is never repeated"
	case gate.OutcomeFencedOut.String():
		msg = "oncegate: fenced out: a newer holder took the key while the body ran; acked; check the sink for a double effect"
		extra = append(extra, "alert", true)
	case gate.OutcomeUnknown.String():
		msg = fmt.Sprintf("oncegate: reconcile key %q: its outcome is unknown; nacked so the dead-letter topic keeps the message", res.key)
	case gate.OutcomeStoreUnavailable.String():
		msg = "oncegate: store unavailable; nacked without running (fail closed)"
	case gate.OutcomeRejected.String():
		msg = "oncegate: claim rejected (key reuse, invalid key or fence exhausted); nacked"
	default:
		msg = "oncegate: delivery failed; nacked"
	}
	attrs := []any{"key", res.key, "fence", res.fence, "outcome", res.outcome, "ack", res.ack}
	if res.ran {
		attrs = append(attrs, "body_duration", res.bodyDur)
	}
	if res.err != nil && res.outcome != gate.OutcomeInProgress.String() && res.outcome != gate.OutcomeDuplicate.String() {
		attrs = append(attrs, "err", res.err.Error())
	}
	log.Log(context.Background(), level, msg, append(attrs, extra...)...)
}
