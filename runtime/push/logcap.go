package push

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"unicode/utf8"
)

// DefaultMaxKeyBytes is AdapterOptions.MaxKeyBytes' default: 1,024 bytes, the
// largest Pub/Sub attribute value (Pub/Sub, "Quotas and limits": attribute
// value size), so any single attribute is a usable key; Pub/Sub message ids
// are about 16 digits. A longer key is refused with 400 before any claim: it
// would pass to suppliers as an Idempotency-Key header that many servers
// refuse (431), making the message a poison that is retried until it is
// dead-lettered.
const DefaultMaxKeyBytes = 1024

// MaxLoggedBytes is how much of a key, message id or error text one log line
// or span attribute carries; a longer value is cut to its first
// MaxLoggedBytes/2 bytes plus its length and a SHA-256 prefix, which tell
// values apart and find them in a store. Cloud Logging's entry limit is
// 256 KB (Cloud Logging, "Quotas and limits": LogEntry size).
const MaxLoggedBytes = 256

// loggable returns s, or when s is longer than MaxLoggedBytes its head
// (whole runes) followed by "…[<n> bytes sha256:<16 hex>]".
func loggable(s string) string { return capped(s, MaxLoggedBytes) }

// loggableErr caps an error's text at 16 × MaxLoggedBytes (4 KiB): errors of
// the gate quote the key, and the handler's own errors are free text.
// A nil error is "".
func loggableErr(err error) string {
	if err == nil {
		return ""
	}
	return capped(err.Error(), 16*MaxLoggedBytes)
}

func capped(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	head := s[:limit/2]
	for len(head) > 0 && !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	sum := sha256.Sum256([]byte(s))
	return head + "…[" + strconv.Itoa(len(s)) + " bytes sha256:" + hex.EncodeToString(sum[:8]) + "]"
}
