package push

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Headers of an unwrapped push with write-metadata on. Pub/Sub writes the
// metadata to "x-goog-pubsub-<KEY>" headers and each attribute to a header of its
// own name (PushConfig.NoWrapper.write_metadata in the Pub/Sub API reference).
// Pub/Sub documents no delivery-attempt header for this form; HeaderDeliveryAttempt
// is read when a relay (such as oncegate's local push bridge) sets it.
const (
	HeaderSubscription    = "X-Goog-Pubsub-Subscription-Name"
	HeaderMessageID       = "X-Goog-Pubsub-Message-Id"
	HeaderPublishTime     = "X-Goog-Pubsub-Publish-Time"
	HeaderOrderingKey     = "X-Goog-Pubsub-Ordering-Key"
	HeaderDeliveryAttempt = "X-Goog-Pubsub-Delivery-Attempt"
)

// transportHeaders are request headers that Cloud Run, its front end or HTTP
// itself set; they are never taken as message attributes.
var transportHeaders = map[string]bool{
	"Accept": true, "Accept-Encoding": true, "Authorization": true, "Connection": true,
	"Content-Length": true, "Content-Type": true, "Forwarded": true, "From": true,
	"Host": true, "Te": true, "Traceparent": true, "Tracestate": true,
	"Transfer-Encoding": true, "User-Agent": true, "Via": true,
}

// transportPrefixes are header prefixes never taken as attributes.
var transportPrefixes = []string{"X-Goog-", "X-Cloud-", "X-Forwarded-", "X-Envoy-", "Ce-"}

// IsUnwrapped reports whether h carries the write-metadata headers of an
// unwrapped push (a message id or subscription name header).
func IsUnwrapped(h http.Header) bool {
	return h.Get(HeaderMessageID) != "" || h.Get(HeaderSubscription) != ""
}

// ParseUnwrapped builds a Message from an unwrapped ("no wrapper") push: body is
// the raw message data; with write-metadata on, h carries the metadata headers
// above and one header per attribute. Attributes are the headers that are not
// transport headers (Authorization, Content-Type, User-Agent, Traceparent, …) nor
// under the prefixes X-Goog-, X-Cloud-, X-Forwarded-, X-Envoy- and Ce-; their
// names are lower-cased, and an attribute named like a transport header cannot be
// told apart from it, so use the wrapped form when attributes must be exact. A
// publish time that is not RFC 3339 or a delivery attempt that is not a
// non-negative integer is malformed (ErrMalformed), as is a metadata or
// attribute header value that is not valid UTF-8 (Pub/Sub's are protobuf
// strings, always UTF-8). Look attributes up with Message.Attribute, which
// matches their names case-insensitively.
func ParseUnwrapped(h http.Header, body []byte) (*Message, error) {
	m := &Message{
		Unwrapped:    true,
		Data:         body,
		MessageID:    h.Get(HeaderMessageID),
		Subscription: h.Get(HeaderSubscription),
		OrderingKey:  h.Get(HeaderOrderingKey),
	}
	if m.Data == nil {
		m.Data = []byte{}
	}
	if v := h.Get(HeaderPublishTime); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return nil, fmt.Errorf("%w: header %s is not an RFC 3339 time", ErrMalformed, HeaderPublishTime)
		}
		m.PublishTime = t
	}
	if v := h.Get(HeaderDeliveryAttempt); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%w: header %s is not a non-negative integer", ErrMalformed, HeaderDeliveryAttempt)
		}
		m.DeliveryAttempt = int(n)
	}
	for _, f := range []struct{ name, v string }{{HeaderMessageID, m.MessageID}, {HeaderSubscription, m.Subscription}, {HeaderOrderingKey, m.OrderingKey}} {
		if !utf8.ValidString(f.v) {
			return nil, fmt.Errorf("%w: header %s is not valid UTF-8", ErrMalformed, f.name)
		}
	}
	for name, vals := range h {
		if len(vals) == 0 || isTransport(name) {
			continue
		}
		if !utf8.ValidString(vals[0]) {
			return nil, fmt.Errorf("%w: attribute header %s is not valid UTF-8", ErrMalformed, http.CanonicalHeaderKey(name))
		}
		if m.Attributes == nil {
			m.Attributes = map[string]string{}
		}
		m.Attributes[strings.ToLower(name)] = vals[0]
	}
	return m, nil
}

func isTransport(name string) bool {
	name = http.CanonicalHeaderKey(name)
	if transportHeaders[name] {
		return true
	}
	for _, p := range transportPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
