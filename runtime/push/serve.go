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

// result is what one delivery came to.
type result struct {
	mode     string // lock, mutex, unguarded, disabled
	key      string // namespaced
	outcome  gate.Outcome
	status   int
	fence    int64
	ran      bool
	claimDur time.Duration
	bodyDur  time.Duration
	err      error
}

// serve resolves the key, runs the delivery and answers.
func (gd *Guard) serve(w http.ResponseWriter, r *http.Request, d Delivery) {
	ctx, span := gd.tel.Tracer.Start(r.Context(), "oncegate."+gd.o.Adapter+" process",
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(telemetry.AttrAdapter.String(gd.o.Adapter),
			telemetry.AttrMessageID.String(loggable(d.MessageID)),
			telemetry.AttrDeliveryAttempt.Int(d.DeliveryAttempt)))
	defer span.End()
	log := gd.log.With("message_id", loggable(d.MessageID), "delivery_attempt", d.DeliveryAttempt)

	keyed := d.KeyErr == nil && d.Key != ""
	var res result
	switch {
	case keyed && len(d.Key) > gd.o.MaxKeyBytes:
		err := fmt.Errorf("key is %d bytes, over the %d-byte limit (GuardOptions.MaxKeyBytes)", len(d.Key), gd.o.MaxKeyBytes)
		span.SetStatus(codes.Error, OutcomeKeyTooLong)
		gd.answer(ctx, w, OutcomeKeyTooLong, gd.o.Mode.String(), http.StatusBadRequest)
		log.Error("oncegate: key too long; refused without a claim", "key", loggable(d.Key), "outcome", OutcomeKeyTooLong,
			"status", http.StatusBadRequest, "err", err)
		return
	case gd.o.Disabled:
		res = gd.runUnguarded(ctx, d, "disabled")
	case !keyed && gd.o.AllowUnguarded:
		log.Warn("oncegate: no key resolvable; running unguarded (AllowUnguarded)", "err", loggableErr(d.KeyErr))
		res = gd.runUnguarded(ctx, d, "unguarded")
	case !keyed:
		err := d.KeyErr
		if err == nil {
			err = errors.New("key function returned an empty key")
		}
		span.SetStatus(codes.Error, OutcomeNoKey)
		gd.answer(ctx, w, OutcomeNoKey, gd.o.Mode.String(), http.StatusInternalServerError)
		log.Error("oncegate: no key resolvable; failing closed without a claim", "outcome", OutcomeNoKey,
			"status", http.StatusInternalServerError, "err", loggableErr(err))
		return
	default:
		res = gd.runGuarded(ctx, d)
	}
	span.SetAttributes(telemetry.AttrKey.String(loggable(res.key)), telemetry.AttrFence.Int64(res.fence),
		telemetry.AttrOutcome.String(res.outcome.String()), telemetry.AttrMode.String(res.mode),
		telemetry.AttrHTTPStatus.Int(res.status))
	if !Acks(res.status) {
		span.SetStatus(codes.Error, res.outcome.String())
	}
	gd.answer(ctx, w, res.outcome.String(), res.mode, res.status)
	gd.logResult(log, res)
}

// runGuarded runs d under the configured verb, timing the claim and the body.
func (gd *Guard) runGuarded(ctx context.Context, d Delivery) result {
	res := result{mode: gd.o.Mode.String(), key: gd.g.Key(d.Key)}
	start := time.Now()
	var bodyStart time.Time
	body := func(bctx context.Context, c gate.Claim) error {
		bodyStart = time.Now()
		res.ran, res.fence = true, c.Fence
		gd.claimSpan(ctx, start, bodyStart, res.key)
		bctx, span := gd.tel.Tracer.Start(bctx, "oncegate.body",
			trace.WithAttributes(telemetry.AttrKey.String(loggable(c.Key)), telemetry.AttrFence.Int64(c.Fence)))
		defer func() {
			res.bodyDur = time.Since(bodyStart)
			span.End()
		}()
		err := d.Run(bctx, c)
		if err != nil {
			span.SetStatus(codes.Error, "body returned an error")
		}
		return err
	}
	var err error
	if gd.o.Mode == ModeMutex {
		err = gd.g.Mutex(ctx, d.Key, body)
	} else {
		err = gd.g.Lock(ctx, d.Key, body)
	}
	if !res.ran {
		res.claimDur = time.Since(start)
		gd.claimSpan(ctx, start, start.Add(res.claimDur), res.key)
		var re *gate.RecordError
		if errors.As(err, &re) {
			res.fence = re.Record.Fence
		}
	} else {
		res.claimDur = bodyStart.Sub(start)
	}
	res.err, res.outcome = err, gate.OutcomeOf(err)
	res.status = Status(res.outcome)
	l := gd.labels(res)
	gd.tel.Claim(ctx, res.claimDur, l)
	if res.ran {
		gd.tel.Body(ctx, res.bodyDur, l)
	}
	return res
}

// claimSpan records the claim as a span with explicit timestamps: it ends where
// the body starts, which only the body callback observes.
func (gd *Guard) claimSpan(ctx context.Context, start, end time.Time, key string) {
	_, span := gd.tel.Tracer.Start(ctx, "oncegate.claim", trace.WithTimestamp(start),
		trace.WithAttributes(telemetry.AttrKey.String(loggable(key))))
	span.End(trace.WithTimestamp(end))
}

// runUnguarded runs d without a claim, under the gate's work deadline when there
// is a gate. A body error is a *gate.BodyError so the mapping matches the guarded
// path (500, or 204 when Permanent).
func (gd *Guard) runUnguarded(ctx context.Context, d Delivery, mode string) result {
	res := result{mode: mode, key: d.Key}
	c := gate.Claim{Key: d.Key}
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if gd.g != nil {
		res.key, c.Key, c.Owner = gd.g.Key(d.Key), gd.g.Key(d.Key), gd.g.Options().Owner
		bctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), gd.g.Options().WorkDeadline)
	}
	defer cancel()
	start := time.Now()
	err := d.Run(bctx, c)
	res.ran, res.bodyDur = true, time.Since(start)
	if err != nil {
		err = &gate.BodyError{Key: c.Key, Err: err}
	}
	res.err, res.outcome = err, gate.OutcomeOf(err)
	res.status = Status(res.outcome)
	gd.tel.Body(ctx, res.bodyDur, gd.labels(res))
	return res
}

func (gd *Guard) labels(res result) telemetry.Labels {
	return telemetry.Labels{Adapter: gd.o.Adapter, Mode: res.mode, Outcome: res.outcome.String(), Ack: Acks(res.status)}
}

// refuse answers a request the Guard turned away before any verb ran.
func (gd *Guard) refuse(w http.ResponseWriter, r *http.Request, status int, outcome string, err error) {
	gd.answer(r.Context(), w, outcome, gd.o.Mode.String(), status)
	gd.log.Warn("oncegate: request refused before any claim", "outcome", outcome, "status", status, "err", loggableErr(err))
}

// answer writes the status and counts the delivery.
func (gd *Guard) answer(ctx context.Context, w http.ResponseWriter, outcome, mode string, status int) {
	gd.tel.Delivery(ctx, telemetry.Labels{Adapter: gd.o.Adapter, Mode: mode, Outcome: outcome, Ack: Acks(status)})
	w.Header().Set(HeaderOutcome, outcome)
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	http.Error(w, "oncegate: "+outcome, status)
}
