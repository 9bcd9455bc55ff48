package pull

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/push"
	"github.com/oncegate/oncegate/runtime/telemetry"
)

// Refusals: outcomes the Receiver answers before any verb runs (both nack, by
// gate's ack table).
var (
	// OutcomeNoKey: the KeyFunc found no key; nacked without a claim.
	OutcomeNoKey = gate.OutcomeNoKey.String()
	// OutcomeStopping: the message arrived after Receive's context ended; nacked
	// without a claim so another subscriber takes it.
	OutcomeStopping = gate.OutcomeStopping.String()
)

// result is what one message came to.
type result struct {
	key     string // namespaced
	outcome gate.Outcome
	ack     bool
	fence   int64
	ran     bool
	bodyDur time.Duration
	err     error
	stack   []byte // the panicking goroutine's stack when the body panicked
}

// view is the read-only push.Message the key function and the body see.
func view(m *pubsub.Message, subscription string) *push.Message {
	pm := &push.Message{
		Data: m.Data, MessageID: m.ID, PublishTime: m.PublishTime,
		OrderingKey: m.OrderingKey, Subscription: subscription,
	}
	if pm.Data == nil {
		pm.Data = []byte{}
	}
	if len(m.Attributes) > 0 {
		pm.Attributes = maps.Clone(m.Attributes)
	}
	if m.DeliveryAttempt != nil {
		pm.DeliveryAttempt = *m.DeliveryAttempt
	}
	return pm
}

// handle guards one message and settles it. drain is cancelled when running
// bodies must stop; ctx is the callback's, done once receiving stopped.
func (r *Receiver) handle(drain, ctx context.Context, m *pubsub.Message, subscription string) {
	msg := view(m, subscription)
	ctx, span := r.tel.Tracer.Start(ctx, "oncegate.pull process",
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(telemetry.AttrAdapter.String("pull"),
			telemetry.AttrMessageID.String(msg.MessageID),
			telemetry.AttrDeliveryAttempt.Int(msg.DeliveryAttempt)))
	defer span.End()
	log := r.log.With("message_id", msg.MessageID, "delivery_attempt", msg.DeliveryAttempt)

	var res result
	key, stack, kerr := r.key(msg)
	switch {
	case ctx.Err() != nil:
		res = result{outcome: gate.OutcomeStopping, ack: gate.OutcomeStopping.Ack(), err: context.Cause(ctx)}
	case kerr != nil || key == "":
		if kerr == nil {
			kerr = errors.New("key function returned an empty key")
		}
		res = result{outcome: gate.OutcomeNoKey, ack: gate.OutcomeNoKey.Ack(), err: kerr, stack: stack}
	default:
		res = r.run(drain, context.WithoutCancel(ctx), key, msg)
	}
	span.SetAttributes(telemetry.AttrKey.String(res.key), telemetry.AttrFence.Int64(res.fence),
		telemetry.AttrOutcome.String(res.outcome.String()), telemetry.AttrMode.String(r.o.Mode.String()))
	if !res.ack {
		span.SetStatus(codes.Error, res.outcome.String())
	}
	r.tel.Delivery(ctx, r.labels(res))
	r.logResult(log, res)
	r.settle(ctx, log, m, res)
}

// key applies the KeyFunc; a panic in it is an error (with the stack), so the
// message is nacked without a claim instead of ending the process.
func (r *Receiver) key(msg *push.Message) (key string, stack []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			key, stack, err = "", debug.Stack(), &PanicError{Value: p}
		}
	}()
	key, err = r.o.KeyFunc(msg)
	return key, nil, err
}

// run claims key under the configured verb and runs the body. The claim is
// bounded by the gate's StoreTimeout (plus Wait under ModeDo); ctx must not be
// cancelled by the end of receiving, since a claim already sent has to finish.
func (r *Receiver) run(drain, ctx context.Context, key string, msg *push.Message) result {
	res := result{key: r.g.Key(key)}
	cctx, cancel := context.WithTimeout(ctx, r.g.Options().StoreTimeout+r.o.Wait)
	defer cancel()
	body := func(bctx context.Context, c gate.Claim) (err error) {
		res.ran, res.fence = true, c.Fence
		bctx, stop := context.WithCancelCause(bctx)
		defer stop(nil)
		unhook := context.AfterFunc(drain, func() { stop(context.Cause(drain)) })
		defer unhook()
		start := time.Now()
		defer func() { res.bodyDur = time.Since(start) }()
		defer func() {
			// The client runs each callback on a goroutine of its own and does
			// not recover: a panic left alone ends the process and every message
			// in flight. As an error, the gate releases the claim and the message
			// is nacked (body-failed), so the retry and dead-letter policies
			// handle a poison message.
			if p := recover(); p != nil {
				res.stack = debug.Stack()
				err = &PanicError{Value: p}
			}
		}()
		return r.fn(bctx, msg, c)
	}
	var err error
	outcome := gate.OutcomeRan
	switch r.o.Mode {
	case ModeMutex:
		err = r.g.Mutex(cctx, key, body)
		outcome = gate.OutcomeOf(err)
	case ModeDo:
		var payload []byte
		if r.o.Fingerprint {
			payload = msg.Data
		}
		var executed bool
		_, executed, err = gate.Do(cctx, r.g, gate.Call{Key: key, Payload: payload, Wait: r.o.Wait},
			func(bctx context.Context, c gate.Claim) (struct{}, error) { return struct{}{}, body(bctx, c) })
		outcome = gate.OutcomeOf(err)
		if err == nil && !executed {
			outcome = gate.OutcomeDuplicate
		}
	default:
		err = r.g.Lock(cctx, key, body)
		outcome = gate.OutcomeOf(err)
	}
	var re *gate.RecordError
	if !res.ran && errors.As(err, &re) {
		res.fence = re.Record.Fence
	}
	res.err, res.outcome, res.ack = err, outcome, outcome.Ack()
	if res.ran {
		r.tel.Body(ctx, res.bodyDur, r.labels(res))
	}
	return res
}

func (r *Receiver) labels(res result) telemetry.Labels {
	return telemetry.Labels{Adapter: "pull", Mode: r.o.Mode.String(), Outcome: res.outcome.String(), Ack: res.ack}
}

// settle acks or nacks m and waits up to AckTimeout for the result, which only a
// subscription with exactly-once delivery makes meaningful (without it the
// client resolves it as a success at once).
func (r *Receiver) settle(ctx context.Context, log *slog.Logger, m *pubsub.Message, res result) {
	var ar *pubsub.AckResult
	if res.ack {
		ar = m.AckWithResult()
	} else {
		ar = m.NackWithResult()
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.o.AckTimeout)
	defer cancel()
	st, err := ar.Get(actx)
	if err == nil && st == pubsub.AcknowledgeStatusSuccess {
		return
	}
	attrs := []any{"key", res.key, "outcome", res.outcome.String(), "ack_status", ackStatus(st)}
	if err != nil {
		attrs = append(attrs, "err", err.Error())
	}
	switch {
	case !res.ack:
		log.Warn("oncegate: nack did not take; the message is redelivered after its ack deadline", attrs...)
	case r.o.Mode == ModeMutex:
		log.Error("oncegate: ack failed; the message will be redelivered and, under mutex, run again", attrs...)
	default:
		log.Error("oncegate: ack failed; the message will be redelivered and the gate's record makes it a duplicate", attrs...)
	}
}

// ackStatus names an AcknowledgeStatus for logs.
func ackStatus(s pubsub.AcknowledgeStatus) string {
	switch s {
	case pubsub.AcknowledgeStatusSuccess:
		return "success"
	case pubsub.AcknowledgeStatusPermissionDenied:
		return "permission-denied"
	case pubsub.AcknowledgeStatusFailedPrecondition:
		return "failed-precondition"
	case pubsub.AcknowledgeStatusInvalidAckID:
		return "invalid-ack-id"
	}
	return fmt.Sprintf("other(%d)", int(s))
}
