package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"unicode/utf8"
)

// hashedKeyPrefix starts every hashed store key. A caller key that itself starts
// with it is hashed too, so a literal key can never equal another key's hash.
const hashedKeyPrefix = "og-sha256:"

// StoreKey returns the form of key a backend stores: key itself when it is valid
// UTF-8, has no NUL byte and is at most maxBytes bytes long, else
// "og-sha256:" + hex(SHA-256(key)). It is deterministic, so every instance maps a
// key to the same record, and injective except for SHA-256 collisions. maxBytes
// must be at least 74 (the hashed form's length); lengths are bytes, not runes.
// Backends with a key-size limit (Datastore: 1,500 bytes; an indexed SQL column)
// call it; binary-safe stores need not.
func StoreKey(key string, maxBytes int) string {
	if len(key) <= maxBytes && utf8.ValidString(key) && !strings.ContainsRune(key, 0) &&
		!strings.HasPrefix(key, hashedKeyPrefix) {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return hashedKeyPrefix + hex.EncodeToString(sum[:])
}

// OperationKey builds an idempotency key from parts with unambiguous escaping:
// each part has "\" written as "\\" and ":" as "\:", and parts are joined with
// ":", so ("a:b", "c") and ("a", "b:c") never collide. Choose parts that are
// stable across retries of one intent and distinct across intents (an order id,
// an operation name, a tenant), never a fresh UUID or a timestamp.
//
// When there are no parts or any part is empty, OperationKey returns the empty
// key, which every verb refuses with ErrInvalidKey before any claim and every
// adapter treats as no key (500, fail closed): an empty part is almost always a
// missing field, and two intents both missing it would otherwise share a
// record ("tenant-1:" for two orders without an id, ":" for two messages
// without either field).
func OperationKey(parts ...string) string {
	if len(parts) == 0 || slices.Contains(parts, "") {
		return ""
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(':')
		}
		for j := 0; j < len(p); j++ {
			if p[j] == '\\' || p[j] == ':' {
				b.WriteByte('\\')
			}
			b.WriteByte(p[j])
		}
	}
	return b.String()
}
