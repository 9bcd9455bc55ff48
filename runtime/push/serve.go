package push

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/telemetry"
)

// Modes other than the verbs', for logs, metrics and spans.
const (
	modeUnguarded = "unguarded"
	modeDisabled  = "disabled"
)

// delivery is what one parsed request came to: the gate's Result (outcome,
// error, namespaced key, fence, body boundary) and what the line, the span and
// the metrics add to it.
type delivery struct {
	gate.Result
	mode      string // lock, mutex, unguarded, disabled
	messageID string
	attempt   int
}

var consumerSpan = trace.WithSpanKind(trace.SpanKindConsumer)

// serve resolves the key, runs the delivery and answers. The claim and body
// spans are children of the process span and are recorded only when it is.
func (gd *Guard) serve(w http.ResponseWriter, r *http.Request, d Delivery) {
	ctx, span := gd.tel.Tracer.Start(r.Context(), gd.spanName, consumerSpan)
	defer span.End()
	traced := span.IsRecording()
	if traced {
		span.SetAttributes(telemetry.AttrAdapter.String(gd.o.Adapter),
			telemetry.AttrMessageID.String(loggable(d.MessageID)),
			telemetry.AttrDeliveryAttempt.Int(d.DeliveryAttempt))
	}
	res := delivery{mode: gd.o.Mode.String(), messageID: d.MessageID, attempt: d.DeliveryAttempt}
	keyed := d.KeyErr == nil && d.Key != ""
	switch {
	case keyed && len(d.Key) > gd.o.MaxKeyBytes:
		res.Outcome, res.Key = gate.OutcomeKeyTooLong, d.Key
		res.Err = fmt.Errorf("key is %d bytes, over the %d-byte limit (AdapterOptions.MaxKeyBytes)", len(d.Key), gd.o.MaxKeyBytes)
	case gd.o.Disabled:
		gd.runUnguarded(ctx, d, modeDisabled, &res)
	case !keyed && gd.o.AllowUnguarded:
		gd.log.Warn("oncegate: no key resolvable; running unguarded (AllowUnguarded)", "message_id", loggable(d.MessageID),
			"delivery_attempt", d.DeliveryAttempt, "err", loggableErr(d.KeyErr))
		gd.runUnguarded(ctx, d, modeUnguarded, &res)
	case !keyed:
		res.Outcome, res.Err = gate.OutcomeNoKey, d.KeyErr
		if res.Err == nil {
			res.Err = errors.New("key function returned an empty key")
		}
	default:
		run := d.Run
		if traced {
			run = gd.bodySpan(d.Run)
		}
		res.Result = gd.g.Run(ctx, gd.verb, d.Key, run)
		claimEnd := res.BodyStart
		if !res.Ran {
			claimEnd = time.Now()
		}
		if traced {
			_, cs := gd.tel.Tracer.Start(ctx, "oncegate.claim", trace.WithTimestamp(res.Start),
				trace.WithAttributes(telemetry.AttrKey.String(loggable(res.Key))))
			cs.End(trace.WithTimestamp(claimEnd))
		}
		m := gd.measure(res.mode, res.Outcome)
		gd.tel.ClaimPrepared(ctx, claimEnd.Sub(res.Start), m)
		if res.Ran {
			gd.tel.BodyPrepared(ctx, res.BodyEnd.Sub(res.BodyStart), m)
		}
	}
	o := res.Outcome
	if traced {
		span.SetAttributes(telemetry.AttrKey.String(loggable(res.Key)), telemetry.AttrFence.Int64(res.Fence),
			telemetry.AttrOutcome.String(o.String()), telemetry.AttrMode.String(res.mode),
			telemetry.AttrHTTPStatus.Int(o.HTTPStatus()))
	}
	if !o.Ack() {
		span.SetStatus(codes.Error, o.String())
	}
	gd.answer(ctx, w, o, res.mode)
	gd.logResult(ctx, &res)
}

// bodySpan wraps run in the "oncegate.body" span.
func (gd *Guard) bodySpan(run gate.Body) gate.Body {
	return func(ctx context.Context, c gate.Claim) error {
		ctx, span := gd.tel.Tracer.Start(ctx, "oncegate.body",
			trace.WithAttributes(telemetry.AttrKey.String(loggable(c.Key)), telemetry.AttrFence.Int64(c.Fence)))
		defer span.End()
		err := run(ctx, c)
		if err != nil {
			span.SetStatus(codes.Error, "body returned an error")
		}
		return err
	}
}

// runUnguarded runs d without a claim, under the gate's work deadline when there
// is a gate. A body error is a *gate.BodyError so the outcome matches the
// guarded path's (500, or 204 when Permanent).
func (gd *Guard) runUnguarded(ctx context.Context, d Delivery, mode string, res *delivery) {
	res.mode, res.Key = mode, d.Key
	c := gate.Claim{Key: d.Key}
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if gd.g != nil {
		res.Key = gd.g.Key(d.Key)
		c.Key, c.Owner = res.Key, gd.g.Options().Owner
		bctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), gd.g.Options().WorkDeadline)
	}
	defer cancel()
	res.Ran, res.Start = true, time.Now()
	res.BodyStart = res.Start
	err := d.Run(bctx, c)
	res.BodyEnd = time.Now()
	res.Outcome = gate.OutcomeRan
	if err != nil {
		res.Err = &gate.BodyError{Key: c.Key, Err: err}
		res.Outcome = gate.OutcomeOf(res.Err)
	}
	gd.tel.BodyPrepared(ctx, res.BodyEnd.Sub(res.BodyStart), gd.measure(mode, res.Outcome))
}

// refuse answers a request the Guard turned away before it was parsed.
func (gd *Guard) refuse(w http.ResponseWriter, r *http.Request, o gate.Outcome, err error) {
	mode := gd.o.Mode.String()
	gd.answer(r.Context(), w, o, mode)
	gd.log.Log(r.Context(), o.LogLevel(), "oncegate: request refused before any claim", "outcome", o.String(),
		"status", o.HTTPStatus(), "err", loggableErr(err))
}

// answer writes o's status and header and counts the delivery: the one place a
// Guard answers.
func (gd *Guard) answer(ctx context.Context, w http.ResponseWriter, o gate.Outcome, mode string) {
	gd.tel.DeliveryPrepared(ctx, gd.measure(mode, o))
	status := o.HTTPStatus()
	if o >= 0 && int(o) < len(outcomeHeader) {
		w.Header()[HeaderOutcome] = outcomeHeader[o] // canonical already
	} else {
		w.Header().Set(HeaderOutcome, o.String())
	}
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	http.Error(w, "oncegate: "+o.String(), status)
}

// outcomeHeader holds each outcome's X-Oncegate-Outcome value, built once
// (each a one-element slice at capacity, so an Add copies it).
var outcomeHeader = func() [][]string {
	var h [][]string
	for _, o := range gate.Outcomes() {
		h = append(h, []string{o.String()}[:1:1])
	}
	return h
}()
