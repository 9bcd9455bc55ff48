package push

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/oncegate/oncegate/runtime/gate"
)

// logResult writes the delivery's one line, at the level its outcome deserves:
// info for an ack that needs no attention, warning for a retry that is expected
// (in-progress: one line, no stack trace), error for anything an operator must
// look at. Attributes: key, fence, outcome, status, mode (plus message_id and
// delivery_attempt from the caller's logger); never payload bytes.
func (gd *Guard) logResult(log *slog.Logger, res result) {
	level, msg := slog.LevelError, ""
	var extra []any
	switch res.outcome {
	case gate.OutcomeRan:
		level, msg = slog.LevelInfo, "oncegate: ran"
	case gate.OutcomeDuplicate:
		level, msg = slog.LevelInfo, "oncegate: duplicate skipped; acked"
	case gate.OutcomeInProgress:
		level, msg = slog.LevelWarn, "oncegate: key in progress elsewhere; nacked for redelivery"
	case gate.OutcomeBodyFailed:
		msg = "oncegate: body failed; nacked for redelivery"
	case gate.OutcomePermanent:
		msg = "oncegate: body failed permanently; acked"
	case gate.OutcomeNotRecorded:
		msg = "oncegate: body ran but the done record was not written; acked so the effect is never repeated"
	case gate.OutcomeFencedOut:
		msg = "oncegate: fenced out: a newer holder took the key while the body ran; acked; check the sink for a double effect"
		extra = append(extra, "alert", true)
	case gate.OutcomeUnknown:
		msg = fmt.Sprintf("oncegate: reconcile key %q: its outcome is unknown; nacked so the dead-letter topic keeps the message", loggable(res.key))
	case gate.OutcomeStoreUnavailable:
		msg = "oncegate: store unavailable; nacked without running (fail closed)"
	case gate.OutcomeRejected:
		msg = "oncegate: claim rejected (key reuse, invalid key or fence exhausted); nacked"
	default:
		msg = "oncegate: delivery failed; nacked"
	}
	if res.mode == "disabled" && level < slog.LevelWarn {
		level = slog.LevelDebug
	}
	attrs := []any{"key", loggable(res.key), "fence", res.fence, "outcome", res.outcome.String(),
		"status", res.status, "mode", res.mode}
	if res.ran {
		attrs = append(attrs, "body_duration", res.bodyDur)
	}
	if res.err != nil && res.outcome != gate.OutcomeInProgress && res.outcome != gate.OutcomeDuplicate {
		attrs = append(attrs, "err", loggableErr(res.err))
	}
	log.Log(context.Background(), level, msg, append(attrs, extra...)...)
}
