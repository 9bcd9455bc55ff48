package gate_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"testing/quick"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
)

func TestOperationKeyExamples(t *testing.T) {
	for _, tc := range []struct {
		parts []string
		want  string
	}{
		{[]string{"tenant-1", "order", "42"}, "tenant-1:order:42"},
		{[]string{"a:b", "c"}, `a\:b:c`},
		{[]string{"a", "b:c"}, `a:b\:c`},
		{[]string{`a\`, "b"}, `a\\:b`},
		{[]string{"a", `\b`}, `a:\\b`},
		// Any empty part (a missing field) gives the empty key, refused by
		// every verb; it built ":" and "a:" before, which were claimed.
		{[]string{"", ""}, ""},
		{[]string{"tenant-1", ""}, ""},
		{[]string{"", "42"}, ""},
		{[]string{""}, ""},
		{nil, ""},
	} {
		if got := gate.OperationKey(tc.parts...); got != tc.want {
			t.Errorf("OperationKey(%q) = %q, want %q", tc.parts, got, tc.want)
		}
	}
}

// TestOperationKeyInjective: distinct part lists without an empty part never
// build the same key; a list with one builds the empty key.
func TestOperationKeyInjective(t *testing.T) {
	alphabet := []byte{'a', ':', '\\', 'b'}
	gen := func(seed []byte) []string {
		var parts []string
		cur := []byte{}
		for _, s := range seed {
			if s%5 == 4 {
				parts = append(parts, string(cur))
				cur = []byte{}
				continue
			}
			cur = append(cur, alphabet[s%4])
		}
		return append(parts, string(cur))
	}
	f := func(x, y []byte) bool {
		a, b := gen(x), gen(y)
		ka, kb := gate.OperationKey(a...), gate.OperationKey(b...)
		if slices.Contains(a, "") || slices.Contains(b, "") {
			return (ka == "") == slices.Contains(a, "") && (kb == "") == slices.Contains(b, "")
		}
		return slices.Equal(a, b) == (ka == kb)
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 20000}); err != nil {
		t.Fatal(err)
	}
}

// TestOperationKeyOfMissingFieldsIsRefused: two intents that both lack a
// field do not dedupe against each other; the verb refuses the key before any
// claim.
func TestOperationKeyOfMissingFieldsIsRefused(t *testing.T) {
	g, err := gate.New(memgate.New(nil), &gate.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, parts := range [][]string{{"", ""}, {"tenant-1", ""}} {
		err := g.Lock(context.Background(), gate.OperationKey(parts...), func(context.Context, gate.Claim) error { ran++; return nil })
		if !errors.Is(err, gate.ErrInvalidKey) {
			t.Errorf("Lock(OperationKey(%q)) = %v, want ErrInvalidKey", parts, err)
		}
	}
	if ran != 0 {
		t.Errorf("ran %d times; want no run", ran)
	}
}
