package push

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"

	"github.com/oncegate/oncegate/runtime/gate"
)

// Size limits.
const (
	// DefaultMaxDataBytes is the largest message data accepted by default:
	// 10,000,000 bytes, Pub/Sub's message size limit (Pub/Sub, "Quotas and
	// limits": message size, the data field, 10 MB).
	DefaultMaxDataBytes int64 = 10_000_000
	// EnvelopeOverheadBytes is the room a request body gets beyond the base64
	// form of the largest data: attributes (at most 100, names up to 256 bytes,
	// values up to 1,024 bytes, per the same quotas page), ids and JSON escapes.
	EnvelopeOverheadBytes int64 = 1 << 20
	// DefaultMaxBodyBytes is the request body cap for DefaultMaxDataBytes.
	DefaultMaxBodyBytes = 4*((DefaultMaxDataBytes+2)/3) + EnvelopeOverheadBytes
)

// MaxBodyBytes returns the request body cap for messages of up to maxDataBytes
// of data: the base64 length of the data plus EnvelopeOverheadBytes.
func MaxBodyBytes(maxDataBytes int64) int64 {
	if maxDataBytes > (math.MaxInt64-EnvelopeOverheadBytes)/4*3 {
		return math.MaxInt64
	}
	return 4*((maxDataBytes+2)/3) + EnvelopeOverheadBytes
}

// Envelope selects the push body form.
type Envelope int

const (
	// EnvelopeAuto parses an unwrapped push when the request carries the
	// write-metadata headers (IsUnwrapped), else a wrapped one. The default. An
	// unwrapped push without write-metadata carries nothing to recognise it by:
	// choose EnvelopeUnwrapped for such a subscription.
	EnvelopeAuto Envelope = iota
	// EnvelopeWrapped parses every body as the JSON envelope.
	EnvelopeWrapped
	// EnvelopeUnwrapped takes every body as the raw data ("no wrapper").
	EnvelopeUnwrapped
)

// ParseRequest parses a push request's body in the given form and checks that
// its data is at most maxDataBytes bytes (no limit when zero or negative). Errors
// match ErrMalformed or ErrTooLarge.
func ParseRequest(h http.Header, body []byte, form Envelope, maxDataBytes int64) (*Message, error) {
	var (
		m   *Message
		err error
	)
	if form == EnvelopeUnwrapped || form == EnvelopeAuto && IsUnwrapped(h) {
		m, err = ParseUnwrapped(h, body)
	} else {
		m, err = ParseEnvelope(body)
	}
	if err != nil {
		return nil, err
	}
	if maxDataBytes > 0 && int64(len(m.Data)) > maxDataBytes {
		return nil, fmt.Errorf("%w: data is %d bytes, over %d", ErrTooLarge, len(m.Data), maxDataBytes)
	}
	return m, nil
}

// HandlerFunc is the work a push handler guards: it runs at most once per key
// (ModeLock) or one at a time per key (ModeMutex). c.Fence should travel with
// every downstream write. Returning an error nacks the message (500) unless it
// is marked with gate.Permanent.
type HandlerFunc func(ctx context.Context, m *Message, c gate.Claim) error

// KeyFunc derives the idempotency key from a message. The gate prefixes it with
// its namespace. An empty key or an error means no key is resolvable.
type KeyFunc func(m *Message) (string, error)

// MessageIDKey is the default KeyFunc: the message id, which every redelivery and
// every subscription of the topic share. It fails when the push carries no id
// (an unwrapped push without write-metadata).
func MessageIDKey(m *Message) (string, error) {
	if m.MessageID == "" {
		return "", errors.New("message has no id (unwrapped push without write-metadata?); set a KeyFunc")
	}
	return m.MessageID, nil
}

// Options configure a push handler: the AdapterOptions every adapter shares
// (gateenv's Config.AdapterOptions fills them from the environment) plus the
// push envelope's own. The zero value (or nil) means defaults.
type Options struct {
	AdapterOptions
	// KeyFunc derives the key. Default MessageIDKey, so the stored key is
	// "<namespace>:<messageId>".
	KeyFunc KeyFunc
	// Envelope is the body form. Default EnvelopeAuto.
	Envelope Envelope
	// MaxDataBytes is the largest message data accepted, in bytes; larger answers
	// 413. Default DefaultMaxDataBytes. The request body may be up to
	// MaxBodyBytes(MaxDataBytes).
	MaxDataBytes int64
}

// NewHandler returns an http.Handler for a Pub/Sub push subscription: it
// verifies the OIDC token when configured, parses the envelope (wrapped or
// unwrapped), derives the key, runs fn through g and answers by the ack table
// (gate.Outcome). It returns an error naming the field when opts is invalid.
func NewHandler(g *gate.Gate, fn HandlerFunc, opts *Options) (*Guard, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if fn == nil {
		return nil, errors.New("push.NewHandler: handler func is nil")
	}
	if o.MaxDataBytes < 0 {
		return nil, fmt.Errorf("push.Options.MaxDataBytes: must be zero (default) or positive, got %d", o.MaxDataBytes)
	}
	if o.Envelope < EnvelopeAuto || o.Envelope > EnvelopeUnwrapped {
		return nil, fmt.Errorf("push.Options.Envelope: %d is not EnvelopeAuto, EnvelopeWrapped or EnvelopeUnwrapped", o.Envelope)
	}
	if o.MaxDataBytes == 0 {
		o.MaxDataBytes = DefaultMaxDataBytes
	}
	if o.KeyFunc == nil {
		o.KeyFunc = MessageIDKey
	}
	// The Guard reuses the body buffer once parsed: a wrapped envelope's
	// fields are decoded into fresh memory, and an unwrapped body, which is
	// the data itself, is copied.
	parse := func(r *http.Request, body []byte) (Delivery, error) {
		m, err := ParseRequest(r.Header, body, o.Envelope, o.MaxDataBytes)
		if err != nil {
			return Delivery{}, err
		}
		if m.Unwrapped {
			m.Data = bytes.Clone(m.Data)
		}
		key, kerr := o.KeyFunc(m)
		return Delivery{
			Key: key, KeyErr: kerr, MessageID: m.MessageID, DeliveryAttempt: m.DeliveryAttempt,
			Run: func(ctx context.Context, c gate.Claim) error { return fn(ctx, m, c) },
		}, nil
	}
	gd, err := NewGuard(g, parse, &GuardOptions{AdapterOptions: o.AdapterOptions,
		Adapter: "push", MaxBodyBytes: MaxBodyBytes(o.MaxDataBytes)})
	if err != nil {
		return nil, err
	}
	gd.reuseBody = true
	return gd, nil
}
