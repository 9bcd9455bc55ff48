package push

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// CheckJSONText refuses a JSON text whose strings would not decode byte for
// byte: bytes that are not UTF-8, and \u escapes of UTF-16 surrogates that do
// not form a pair. encoding/json replaces both with U+FFFD, so message ids
// "sur-\ud800", "sur-\udfff" and "sur-\ufffd" would decode to one key. Pub/Sub
// never sends either: message ids and attributes are protobuf strings, which
// are valid UTF-8. The error matches ErrMalformed and never quotes the text.
// It expects a syntactically valid text; the decoder reports other faults.
func CheckJSONText(b []byte) error {
	if !utf8.Valid(b) {
		return fmt.Errorf("%w: body is not valid UTF-8", ErrMalformed)
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			continue
		}
		if b[i+1] != 'u' {
			i++ // a two-byte escape such as \\ or \"
			continue
		}
		r, ok := hex4(b, i+2)
		if !ok {
			return nil // not JSON; the decoder says why
		}
		i += 5
		if !utf16.IsSurrogate(r) {
			continue
		}
		if r < 0xdc00 && i+6 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
			if lo, ok := hex4(b, i+3); ok && lo >= 0xdc00 && lo <= 0xdfff {
				i += 6
				continue
			}
		}
		return fmt.Errorf("%w: unpaired UTF-16 surrogate escape at byte offset %d", ErrMalformed, i-5)
	}
	return nil
}

// hex4 reads four hex digits at b[at:].
func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
