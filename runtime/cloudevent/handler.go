package cloudevent

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/push"
)

// HandlerFunc is the work a CloudEvent handler guards: it runs at most once per
// key (push.ModeLock) or one at a time per key (push.ModeMutex). c.Fence should
// travel with every downstream write. An error nacks (500) unless it is marked
// with gate.Permanent.
type HandlerFunc func(ctx context.Context, e *Event, c gate.Claim) error

// Options configure a CloudEvent handler: push.AdapterOptions, the options
// every adapter shares (gateenv's Config.AdapterOptions fills them from the
// environment), plus the event's own. The zero value (or nil) means defaults.
type Options struct {
	push.AdapterOptions
	// KeyFunc derives the key. Default DefaultKey.
	KeyFunc KeyFunc
	// MaxDataBytes is the largest message data accepted, in bytes; larger answers
	// 413. Default push.DefaultMaxDataBytes (Pub/Sub's 10 MB message limit).
	MaxDataBytes int64
}

// NewHandler returns an http.Handler for CloudEvents: it verifies the OIDC
// token when configured, parses the event (binary or structured mode; 400 when
// it is not a valid CloudEvent), derives the key, runs fn through g and answers
// by the ack table (gate.Outcome). It returns an error naming the field when opts is invalid.
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
	return push.NewGuard(g, parse, &push.GuardOptions{AdapterOptions: o.AdapterOptions,
		Adapter: "cloudevent", MaxBodyBytes: push.MaxBodyBytes(o.MaxDataBytes)})
}
