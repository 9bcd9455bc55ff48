package push

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/oncegate/oncegate/runtime/gate"
)

// logMessages is each outcome's line; the level is the ack table's
// (gate.Outcome.LogLevel).
var logMessages = map[gate.Outcome]string{
	gate.OutcomeRan:              "oncegate: ran",
	gate.OutcomeDuplicate:        "oncegate: duplicate skipped; acked",
	gate.OutcomeInProgress:       "oncegate: key in progress elsewhere; nacked for redelivery",
	gate.OutcomeBodyFailed:       "oncegate: body failed; nacked for redelivery",
	gate.OutcomePermanent:        "oncegate: body failed permanently; acked",
	gate.OutcomeNotRecorded:      "oncegate: body ran but the done record was not written; acked so the effect is never repeated",
	gate.OutcomeFencedOut:        "oncegate: fenced out: a newer holder took the key while the body ran; acked; check the sink for a double effect",
	gate.OutcomeStoreUnavailable: "oncegate: store unavailable; nacked without running (fail closed)",
	gate.OutcomeRejected:         "oncegate: claim rejected (key reuse, invalid key or fence exhausted); nacked",
	gate.OutcomeNoKey:            "oncegate: no key resolvable; failing closed without a claim",
	gate.OutcomeKeyTooLong:       "oncegate: key too long; refused without a claim",
}

// logResult writes the delivery's one line at its outcome's level (debug for
// an info line of a disabled guard). Attributes: key, fence, outcome, status,
// mode, message_id, delivery_attempt, body_duration when the body ran, err
// (not for in-progress and duplicate, which are expected), alert=true for
// fenced-out; never payload bytes. An unknown outcome's line says
// "reconcile key …" with the key.
func (gd *Guard) logResult(ctx context.Context, res *delivery) {
	o := res.Outcome
	level := o.LogLevel()
	if res.mode == modeDisabled && level < slog.LevelWarn {
		level = slog.LevelDebug
	}
	if !gd.log.Enabled(ctx, level) {
		return
	}
	msg, ok := logMessages[o]
	switch {
	case o == gate.OutcomeUnknown:
		msg = "oncegate: reconcile key " + strconv.Quote(loggable(res.Key)) + ": its outcome is unknown; nacked so the dead-letter topic keeps the message"
	case !ok:
		msg = "oncegate: delivery failed; nacked"
	}
	attrs := make([]slog.Attr, 0, 11)
	attrs = append(attrs, slog.String("message_id", loggable(res.messageID)), slog.Int("delivery_attempt", res.attempt),
		slog.String("key", loggable(res.Key)), slog.Int64("fence", res.Fence), slog.String("outcome", o.String()),
		slog.Int("status", o.HTTPStatus()), slog.String("mode", res.mode))
	if res.Ran {
		attrs = append(attrs, slog.Duration("body_duration", res.BodyEnd.Sub(res.BodyStart)))
	}
	if res.Err != nil && o != gate.OutcomeInProgress && o != gate.OutcomeDuplicate {
		attrs = append(attrs, slog.String("err", loggableErr(res.Err)))
	}
	if o == gate.OutcomeFencedOut {
		attrs = append(attrs, slog.Bool("alert", true))
	}
	gd.log.LogAttrs(ctx, level, msg, attrs...)
}
