package gate_test

import (
	"slices"
	"testing"
	"testing/quick"

	"github.com/oncegate/oncegate/runtime/gate"
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
	} {
		if got := gate.OperationKey(tc.parts...); got != tc.want {
			t.Errorf("OperationKey(%q) = %q, want %q", tc.parts, got, tc.want)
		}
	}
}

// TestOperationKeyInjective: distinct part lists never build the same key.
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
		return slices.Equal(a, b) == (gate.OperationKey(a...) == gate.OperationKey(b...))
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 20000}); err != nil {
		t.Fatal(err)
	}
}
