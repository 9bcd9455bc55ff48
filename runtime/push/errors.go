package push

import "errors"

// Sentinel errors of the request parsers. Callers branch on them with errors.Is.
var (
	// ErrMalformed: the request is not a valid envelope (bad JSON, invalid base64,
	// conflicting id spellings, a bad header). The adapters answer 400, a nack, so
	// the dead-letter topic keeps the message. Returned by ParseEnvelope,
	// ParseUnwrapped and ParseRequest.
	ErrMalformed = errors.New("oncegate: malformed envelope")
	// ErrTooLarge: the message data is larger than the configured limit. The
	// adapters answer 413. Returned by ParseEnvelope and ParseUnwrapped through
	// ParseRequest, and by a Guard's body read.
	ErrTooLarge = errors.New("oncegate: message too large")
)
