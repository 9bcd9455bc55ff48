package faults_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/oncegate/oncegate/runtime/gate"
)

// FuzzStoreKey checks gate.StoreKey, the key form the size-limited backends
// (SQL: 512 bytes, Datastore: 1,500) store, on pairs of keys: the result fits
// the limit, is valid UTF-8 without NUL, is the key itself when the key already
// is such a string (and does not look like a hash), and two different keys never
// map to one stored key.
func FuzzStoreKey(f *testing.F) {
	for _, s := range [][2]string{
		{"a", "b"}, {"a\x00", "a"}, {"\xff", "\ufffd"}, {"é", "e\u0301"},
		{strings.Repeat("p", 512), strings.Repeat("p", 513)}, {"og-sha256:", "og-sha256:x"},
	} {
		f.Add(s[0], s[1], 512)
	}
	f.Add("k", "og-sha256:7e6e0ab8d5b8b7e7dd5a5fb7a0a2c0b0e8b4c9a15b5d7a2f0ab1c55c6b9fd8f3", 74)
	f.Fuzz(func(t *testing.T, a, b string, maxBytes int) {
		if maxBytes < 74 || maxBytes > 4096 {
			maxBytes = 74 + (maxBytes%4000+4000)%4000
		}
		sa, sb := gate.StoreKey(a, maxBytes), gate.StoreKey(b, maxBytes)
		for _, s := range []string{sa, sb} {
			if len(s) > maxBytes || !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
				t.Fatalf("StoreKey gave %q (%d bytes) for a limit of %d", s, len(s), maxBytes)
			}
		}
		if plain := len(a) <= maxBytes && utf8.ValidString(a) && !strings.ContainsRune(a, 0) &&
			!strings.HasPrefix(a, "og-sha256:"); plain && sa != a {
			t.Fatalf("StoreKey(%q) = %q; a storable key is kept as it is", a, sa)
		}
		if (a == b) != (sa == sb) {
			t.Fatalf("StoreKey(%q) = %q and StoreKey(%q) = %q: different keys share a record", a, sa, b, sb)
		}
		if gate.StoreKey(a, maxBytes) != sa {
			t.Fatal("StoreKey is not deterministic")
		}
	})
}
