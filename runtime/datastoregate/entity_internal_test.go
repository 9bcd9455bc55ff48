package datastoregate

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/oncegate/oncegate/runtime/gate"
)

// FuzzEntityRoundTrip: any record survives Save then Load unchanged once its
// times are normalized to the microsecond.
func FuzzEntityRoundTrip(f *testing.F) {
	f.Add("order:1", "claimed", int64(1), int64(1700000000123456789), int64(0), "tok", "me", []byte("fp"), []byte("res"), true)
	f.Add("bad\xff", "unknown", gate.MaxFence, int64(-5), int64(0), "", "", []byte(nil), []byte(nil), false)
	f.Fuzz(func(t *testing.T, key, state string, fence, lease, done int64, token, owner string, fp, result []byte, hasResult bool) {
		if !utf8.ValidString(state) || !utf8.ValidString(token) || !utf8.ValidString(owner) {
			t.Skip("the backend only stores UTF-8 in these fields")
		}
		r := gate.Record{
			Key: key, State: gate.State(state), Fence: fence,
			LeaseExpiry: time.Unix(0, lease), ExpiresAt: time.Unix(0, lease).Add(time.Hour),
			ClaimToken: token, Owner: owner, Fingerprint: fp,
		}
		if done != 0 {
			r.DoneAt = time.Unix(0, done)
		}
		if hasResult {
			r.Result = append([]byte{}, result...)
		}
		r = normalize(r)
		ps, err := (&entity{rec: r}).Save()
		if err != nil {
			t.Fatal(err)
		}
		var e entity
		if err := e.Load(ps); err != nil {
			t.Fatal(err)
		}
		if len(r.Fingerprint) == 0 {
			e.rec.Fingerprint = r.Fingerprint
		}
		if !sameRecord(e.rec, r) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", e.rec, r)
		}
	})
}

// FuzzKeyName: every non-empty record key gets a name Datastore accepts, and
// two different keys never share one.
func FuzzKeyName(f *testing.F) {
	f.Add("order:1", "order:2")
	f.Add("__x__", "og-sha256:")
	f.Add(strings.Repeat("k", 1501), "k\x00")
	s := &Store{kind: DefaultKind}
	f.Fuzz(func(t *testing.T, a, b string) {
		if a == "" || b == "" {
			t.Skip("the gate refuses empty keys")
		}
		na, nb := s.dsKey(a).Name, s.dsKey(b).Name
		for _, n := range []string{na, nb} {
			if n == "" || len(n) > maxNameBytes || reserved(n) || !utf8.ValidString(n) || strings.ContainsRune(n, 0) {
				t.Fatalf("invalid entity name %q", n)
			}
		}
		if a != b && na == nb {
			t.Fatalf("keys %q and %q share the name %q", a, b, na)
		}
	})
}
