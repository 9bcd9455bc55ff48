package cloudevent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/push"
)

// HandlerFunc is the work a CloudEvent handler guards: it runs at most once per
// key (push.ModeLock) or one at a time per key (push.ModeMutex). c.Fence should
// travel with every downstream write. An error nacks (500) unless it is marked
// with gate.Permanent.
type HandlerFunc func(ctx context.Context, e *Event, c gate.Claim) error

// Options configure a CloudEvent handler. The zero value (or nil) means
// defaults; the fields mean what push.Options' fields of the same names mean.
type Options struct {
	// Mode is the verb. Default push.ModeLock.
	Mode push.Mode
	// KeyFunc derives the key. Default DefaultKey.
	KeyFunc KeyFunc
	// AllowUnguarded runs an event whose key is not resolvable without a claim
	// instead of failing closed (500, no claim).
	AllowUnguarded bool
	// MaxDataBytes is the largest message data accepted, in bytes; larger answers
	// 413. Default push.DefaultMaxDataBytes (Pub/Sub's 10 MB message limit).
	MaxDataBytes int64
	// MaxConcurrentReads bounds the request bodies read at once. Default
	// push.DefaultMaxConcurrentReads.
	MaxConcurrentReads int
	// MaxKeyBytes is the longest key accepted. Default push.DefaultMaxKeyBytes.
	MaxKeyBytes int
	// OIDC, when set, verifies the request's OIDC token before any claim (an
	// Eventarc trigger's service account).
	OIDC *push.OIDCConfig
	// Disabled makes the handler a logged pass-through (handler unit tests only).
	Disabled bool
	// Logger receives one line per event. Default: the gate's logger.
	Logger *slog.Logger
	// MeterProvider and TracerProvider default to the otel globals.
	MeterProvider  metric.MeterProvider
	TracerProvider trace.TracerProvider
}

// NewHandler returns an http.Handler for CloudEvents: it verifies the OIDC
// token when configured, parses the event (binary or structured mode; 400 when
// it is not a valid CloudEvent), derives the key, runs fn through g and answers
// by push.Status. It returns an error naming the field when opts is invalid.
func NewHandler(g *gate.Gate, fn HandlerFunc, opts *Options) (*push.Guard, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if fn == nil {
		return nil, errors.New("cloudevent.NewHandler: handler func is nil")
	}
	if o.MaxDataBytes < 0 {
		return nil, fmt.Errorf("cloudevent.Options.MaxDataBytes: must be zero (default) or positive, got %d", o.MaxDataBytes)
	}
	if o.MaxDataBytes == 0 {
		o.MaxDataBytes = push.DefaultMaxDataBytes
	}
	if o.KeyFunc == nil {
		o.KeyFunc = DefaultKey
	}
	parse := func(r *http.Request, body []byte) (push.Delivery, error) {
		e, err := ParseRequest(r, body, o.MaxDataBytes)
		if err != nil {
			return push.Delivery{}, err
		}
		key, kerr := o.KeyFunc(e)
		d := push.Delivery{
			Key: key, KeyErr: kerr, MessageID: e.CloudEvent.ID(),
			Run: func(ctx context.Context, c gate.Claim) error { return fn(ctx, e, c) },
		}
		if e.Message != nil {
			d.DeliveryAttempt = e.Message.DeliveryAttempt
			if e.Message.MessageID != "" {
				d.MessageID = e.Message.MessageID
			}
		}
		return d, nil
	}
	// A structured-mode body nests the base64 data inside the event's JSON;
	// the envelope overhead covers the event attributes.
	return push.NewGuard(g, parse, &push.GuardOptions{
		Adapter: "cloudevent", Mode: o.Mode, MaxBodyBytes: push.MaxBodyBytes(o.MaxDataBytes),
		MaxConcurrentReads: o.MaxConcurrentReads, MaxKeyBytes: o.MaxKeyBytes,
		AllowUnguarded: o.AllowUnguarded, Disabled: o.Disabled, OIDC: o.OIDC, Logger: o.Logger,
		MeterProvider: o.MeterProvider, TracerProvider: o.TracerProvider,
	})
}
