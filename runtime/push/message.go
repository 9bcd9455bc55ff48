package push

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"
)

// Message is one Pub/Sub message as a push delivered it, in either envelope
// form. Handlers must not modify it.
type Message struct {
	// Data is the message payload, decoded once from base64 (wrapped form) or the
	// raw request body (unwrapped form). A message without data has an empty Data.
	Data []byte
	// Attributes are the message's attributes; nil when it has none. In the
	// unwrapped form their names are lower-cased (HTTP headers are
	// case-insensitive); see ParseUnwrapped. Look them up with Attribute,
	// which matches the way each form carries them.
	Attributes map[string]string
	// Unwrapped reports the message came as an unwrapped ("no wrapper") push,
	// its attributes as HTTP headers.
	Unwrapped bool
	// MessageID is the server-assigned id, unique within a topic: every
	// subscription of the topic and every redelivery sees the same id. Empty when
	// the envelope carries none (unwrapped delivery without write-metadata).
	MessageID string
	// PublishTime is when Pub/Sub accepted the message; the zero time when absent.
	PublishTime time.Time
	// OrderingKey is the message's ordering key; empty when it has none.
	OrderingKey string
	// Subscription is the full subscription name
	// ("projects/<p>/subscriptions/<s>"); empty when absent.
	Subscription string
	// DeliveryAttempt is Pub/Sub's approximate count of delivery attempts. It is
	// present only on a subscription with a dead-letter policy; 0 means absent and
	// is never guessed.
	DeliveryAttempt int
}

// Attribute returns the value of the attribute name and whether it is present.
// A wrapped message's names are matched exactly (Pub/Sub attribute names are
// case-sensitive). An unwrapped message's are matched case-insensitively:
// Pub/Sub writes each attribute to a header of its name (PushConfig.NoWrapper
// write_metadata in the Pub/Sub API reference), and header names are
// case-insensitive (RFC 9110, section 5.1), are sent in lower case over HTTP/2
// (RFC 9113, section 8.2.2) and are canonicalised by Go's server, so the
// publisher's spelling ("orderId") does not survive; an unwrapped push reaches
// the handler as "orderid".
func (m *Message) Attribute(name string) (string, bool) {
	if m.Unwrapped {
		name = strings.ToLower(name)
	}
	v, ok := m.Attributes[name]
	return v, ok
}

// wireEnvelope is the wrapped push body: see Pub/Sub's push subscription docs
// ("Receive messages from push subscriptions"), whose example carries both id
// spellings.
type wireEnvelope struct {
	Message         *wireMessage `json:"message"`
	Subscription    string       `json:"subscription"`
	DeliveryAttempt *int64       `json:"deliveryAttempt"`
}

type wireMessage struct {
	Data         wireData          `json:"data"`
	Attributes   map[string]string `json:"attributes"`
	MessageID    string            `json:"messageId"`
	MessageIDAlt string            `json:"message_id"`
	PublishTime  string            `json:"publishTime"`
	PublishAlt   string            `json:"publish_time"`
	OrderingKey  string            `json:"orderingKey"`
}

// ParseEnvelope parses a wrapped push body (a JSON object with "message",
// "subscription" and, with a dead-letter policy, "deliveryAttempt"). Both
// spellings of the id and publish time ("messageId"/"message_id",
// "publishTime"/"publish_time") are accepted; when both are present and differ
// the envelope is malformed. A missing or null "data" is an empty payload; data
// that is not base64 is malformed. A body that is not valid UTF-8 or holds an
// unpaired surrogate escape ("\ud800") is malformed (CheckJSONText), so every
// id and attribute is byte-exact: the decoder would fold both to U+FFFD and two
// messages would share one key. Unknown fields are ignored. Every error
// matches ErrMalformed.
func ParseEnvelope(body []byte) (*Message, error) {
	if err := CheckJSONText(body); err != nil {
		return nil, err
	}
	var w wireEnvelope
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, jsonError(err)
	}
	if w.Message == nil {
		return nil, fmt.Errorf("%w: no \"message\" object", ErrMalformed)
	}
	return w.Message.toMessage(w.Subscription, w.DeliveryAttempt)
}

func (wm *wireMessage) toMessage(subscription string, attempt *int64) (*Message, error) {
	id, err := oneOf("messageId", wm.MessageID, "message_id", wm.MessageIDAlt)
	if err != nil {
		return nil, err
	}
	pt, err := publishTime(wm.PublishTime, wm.PublishAlt)
	if err != nil {
		return nil, err
	}
	m := &Message{
		MessageID: id, PublishTime: pt, OrderingKey: wm.OrderingKey,
		Subscription: subscription, Data: []byte{},
	}
	if len(wm.Attributes) > 0 {
		m.Attributes = maps.Clone(wm.Attributes)
	}
	if attempt != nil {
		if *attempt < 0 || *attempt > 1<<31-1 {
			return nil, fmt.Errorf("%w: \"deliveryAttempt\" %d is out of range", ErrMalformed, *attempt)
		}
		m.DeliveryAttempt = int(*attempt)
	}
	if len(wm.Data) > 0 {
		m.Data = wm.Data
	}
	return m, nil
}

// wireData is the envelope's base64 "data", decoded straight from the body's
// bytes rather than through a string copy of them. Absent, null and "" are
// empty; anything else that is not a base64 string is malformed.
type wireData []byte

// UnmarshalJSON implements json.Unmarshaler.
func (d *wireData) UnmarshalJSON(raw []byte) error {
	if string(raw) == "null" {
		return nil
	}
	if len(raw) < 2 || raw[0] != '"' {
		return fmt.Errorf("%w: \"data\" is not a string", ErrMalformed)
	}
	src := raw[1 : len(raw)-1]
	if bytes.IndexByte(src, '\\') >= 0 { // escapes (\/, \u0041): unquote first
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("%w: \"data\" is not a valid string", ErrMalformed)
		}
		src = []byte(s)
	}
	if len(src) == 0 {
		return nil
	}
	b, err := decodeBase64(src)
	if err != nil {
		return err
	}
	*d = b
	return nil
}

// oneOf merges the two spellings of one field: an empty value counts as absent.
func oneOf(name, a, altName, b string) (string, error) {
	switch {
	case a == "":
		return b, nil
	case b == "" || a == b:
		return a, nil
	}
	return "", fmt.Errorf("%w: %q and %q differ", ErrMalformed, name, altName)
}

func publishTime(a, b string) (time.Time, error) {
	var out time.Time
	for _, f := range []struct{ name, v string }{{"publishTime", a}, {"publish_time", b}} {
		if f.v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, f.v)
		if err != nil {
			return time.Time{}, fmt.Errorf("%w: %q is not an RFC 3339 time", ErrMalformed, f.name)
		}
		if !out.IsZero() && !out.Equal(t) {
			return time.Time{}, fmt.Errorf("%w: \"publishTime\" and \"publish_time\" differ", ErrMalformed)
		}
		out = t
	}
	return out, nil
}

// decodeBase64 accepts what the protobuf JSON mapping accepts for bytes fields:
// standard or URL-safe base64, with or without padding (Pub/Sub itself sends
// standard, padded).
func decodeBase64(src []byte) ([]byte, error) {
	// The unpadded length decodes to exactly the data's size, which bounds
	// what any of the four writes (each writes only whole decoded bytes).
	dst := make([]byte, base64.RawStdEncoding.DecodedLen(len(bytes.TrimRight(src, "="))))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if n, err := enc.Decode(dst, src); err == nil {
			return dst[:n:n], nil
		}
	}
	return nil, fmt.Errorf("%w: \"data\" is not base64", ErrMalformed)
}

// jsonError describes a decoding error without quoting the body (a syntax
// error's message quotes a byte of it; logs never carry payload bytes).
func jsonError(err error) error {
	if errors.Is(err, ErrMalformed) { // a field's own decoder said why
		return err
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("%w: invalid JSON at byte offset %d", ErrMalformed, se.Offset)
	case errors.As(err, &te):
		return fmt.Errorf("%w: JSON field %q is not a %s", ErrMalformed, te.Field, te.Type)
	}
	return fmt.Errorf("%w: invalid JSON", ErrMalformed)
}
