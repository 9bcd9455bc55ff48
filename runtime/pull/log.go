package pull

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/oncegate/oncegate/runtime/gate"
)

// logMessages is the line pull writes for each outcome it produces; the level
// is the ack table's (gate.Outcome.LogLevel), and whether it acks is too
// (gate.Outcome.Ack), so the text only says what happened to the message.
// OutcomeUnknown's line names the key (see logResult); an outcome missing here
// logs "oncegate: delivery failed; nacked" (or "...; acked").
var logMessages = map[gate.Outcome]string{
	gate.OutcomeRan:              "oncegate: ran; acked",
	gate.OutcomeDuplicate:        "oncegate: duplicate skipped; acked",
	gate.OutcomeInProgress:       "oncegate: key in progress elsewhere; nacked for redelivery",
	gate.OutcomeStopping:         "oncegate: received while stopping; nacked without a claim",
	gate.OutcomeNoKey:            "oncegate: no key resolvable; nacked without a claim (fail closed)",
	gate.OutcomeBodyFailed:       "oncegate: body failed; nacked for redelivery",
	gate.OutcomePermanent:        "oncegate: body failed permanently; recorded failed and acked",
	gate.OutcomeNotRecorded:      "oncegate: body ran but the done record was not written; acked so the effect is never repeated",
	gate.OutcomeFencedOut:        "oncegate: fenced out: a newer holder took the key while the body ran; acked; check the sink for a double effect",
	gate.OutcomeStoreUnavailable: "oncegate: store unavailable; nacked without running (fail closed)",
	gate.OutcomeRejected:         "oncegate: claim rejected (key reuse, invalid key or fence exhausted); nacked",
}

// logResult writes the message's one line at its outcome's level in gate's ack
// table (gate.Outcome.LogLevel), as the push adapter does: info for an ack
// that needs no attention, warning for an expected retry (in-progress,
// stopping), error for the rest (fenced-out carries alert=true; unknown says
// "reconcile key …"). Attributes: key, fence, outcome, ack (plus adapter,
// mode, message_id and delivery_attempt from the logger); never payload bytes.
func (r *Receiver) logResult(log *slog.Logger, res result) {
	o := res.outcome
	msg, ok := logMessages[o]
	switch {
	case o == gate.OutcomeUnknown:
		msg = "oncegate: reconcile key " + strconv.Quote(res.key) + ": its outcome is unknown; nacked so the dead-letter topic keeps the message"
	case !ok && res.ack:
		msg = "oncegate: delivery failed; acked"
	case !ok:
		msg = "oncegate: delivery failed; nacked"
	}
	attrs := []any{"key", res.key, "fence", res.fence, "outcome", o.String(), "ack", res.ack}
	if res.ran {
		attrs = append(attrs, "body_duration", res.bodyDur)
	}
	if res.err != nil && o != gate.OutcomeInProgress && o != gate.OutcomeDuplicate {
		attrs = append(attrs, "err", res.err.Error())
	}
	if res.stack != nil {
		msg = "oncegate: body panicked; claim released, nacked for redelivery (the dead-letter topic takes a poison message)"
		if !res.ran {
			msg = "oncegate: key function panicked; nacked without a claim (fail closed)"
		}
		attrs = append(attrs, "panic", true, "stack", string(res.stack))
	}
	if o == gate.OutcomeFencedOut {
		attrs = append(attrs, "alert", true)
	}
	log.Log(context.Background(), o.LogLevel(), msg, attrs...)
}
