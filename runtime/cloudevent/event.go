package cloudevent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/oncegate/oncegate/runtime/push"
)

// PubSubMessagePublished is the CloudEvent type Eventarc uses for a Pub/Sub
// message (google-cloudevents: google.events.cloud.pubsub.v1.MessagePublishedData).
const PubSubMessagePublished = "google.cloud.pubsub.topic.v1.messagePublished"

// Event is one received CloudEvent. Handlers must not modify it.
type Event struct {
	// CloudEvent is the event as the CloudEvents SDK parsed it (id, source, type,
	// time, extensions, data).
	CloudEvent event.Event
	// Message is the Pub/Sub message a PubSubMessagePublished event carries; nil
	// for any other type.
	Message *push.Message
}

// ParseRequest parses a CloudEvent in binary or structured content mode from a
// request whose body was already read. For a PubSubMessagePublished event it
// parses the data as MessagePublishedData (the wrapped push envelope's shape).
// Message data (or, for other types, event data) over maxDataBytes is
// ErrTooLarge (no limit when zero or negative). A structured-mode body that
// push.CheckJSONText refuses (not UTF-8, or an unpaired surrogate escape, which
// the decoder would fold to U+FFFD so that two event ids share one key), and
// an id or source that is not valid UTF-8, are malformed. Other errors match
// push.ErrMalformed; they never quote the body.
func ParseRequest(r *http.Request, body []byte, maxDataBytes int64) (*Event, error) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); strings.HasPrefix(mt, "application/cloudevents") {
		if err := push.CheckJSONText(body); err != nil {
			return nil, err
		}
	}
	req := r.Clone(r.Context())
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	ce, err := cehttp.NewEventFromHTTPRequest(req)
	if err != nil || ce == nil {
		return nil, fmt.Errorf("%w: not a CloudEvent in binary or structured content mode", push.ErrMalformed)
	}
	if err := ce.Validate(); err != nil {
		return nil, fmt.Errorf("%w: invalid CloudEvent: %w", push.ErrMalformed, err)
	}
	if !utf8.ValidString(ce.ID()) || !utf8.ValidString(ce.Source()) {
		return nil, fmt.Errorf("%w: CloudEvent id or source is not valid UTF-8", push.ErrMalformed)
	}
	e := &Event{CloudEvent: *ce}
	size := int64(len(ce.Data()))
	if ce.Type() == PubSubMessagePublished {
		if len(ce.Data()) == 0 {
			return nil, fmt.Errorf("%w: %s event without data", push.ErrMalformed, PubSubMessagePublished)
		}
		if e.Message, err = push.ParseEnvelope(ce.Data()); err != nil {
			return nil, err
		}
		size = int64(len(e.Message.Data))
	}
	if maxDataBytes > 0 && size > maxDataBytes {
		return nil, fmt.Errorf("%w: data is %d bytes, over %d", push.ErrTooLarge, size, maxDataBytes)
	}
	return e, nil
}

// KeyFunc derives the idempotency key from an event; the gate prefixes its
// namespace. An empty key or an error means no key is resolvable.
type KeyFunc func(e *Event) (string, error)

// DefaultKey is the default KeyFunc: the Pub/Sub message id for a
// PubSubMessagePublished event (falling back to the event id, which Eventarc sets
// to the message id), else "<source> <id>" — the pair the CloudEvents
// specification makes unique; a URI-reference source holds no space, so the
// pair cannot collide.
func DefaultKey(e *Event) (string, error) {
	if e.Message != nil {
		if e.Message.MessageID != "" {
			return e.Message.MessageID, nil
		}
		if e.CloudEvent.ID() != "" {
			return e.CloudEvent.ID(), nil
		}
		return "", errors.New("Pub/Sub event without a message id")
	}
	return e.CloudEvent.Source() + " " + e.CloudEvent.ID(), nil
}
