package redisgate

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

func FuzzDecodeRecord(f *testing.F) {
	f.Add("state", "claimed", "fence", "9007199254740991", "lease_expiry", "1796050351484", "result", "\x00\xff")
	f.Add("fence", "-1", "expires_at", "x", "owner", "", "", "")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3, k4, v4 string) {
		flat := []any{k1, v1, k2, v2, k3, v3, k4, v4}
		r, err := decodeRecord("k", flat)
		if err != nil {
			return
		}
		last := map[string]string{}
		for i := 0; i < len(flat); i += 2 {
			last[flat[i].(string)] = flat[i+1].(string)
		}
		if v, ok := last["fence"]; ok && strconv.FormatInt(r.Fence, 10) != v {
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n != r.Fence {
				t.Fatalf("fence %q decoded as %d", v, r.Fence)
			}
		}
		if v, ok := last["lease_expiry"]; ok {
			if ms, _ := strconv.ParseInt(v, 10, 64); !r.LeaseExpiry.Equal(time.UnixMilli(ms)) || r.LeaseExpiry.Location() != time.UTC {
				t.Fatalf("lease_expiry %q decoded as %v", v, r.LeaseExpiry)
			}
		}
		if v, ok := last["result"]; ok && string(r.Result) != v {
			t.Fatalf("result %q decoded as %q", v, r.Result)
		}
		if r.Key != "k" {
			t.Fatalf("key %q", r.Key)
		}
	})
}

func TestDecodeRecordRejects(t *testing.T) {
	for _, v := range []any{nil, "x", []any{"state"}, []any{"fence", int64(1)}, []any{"fence", "1.5"}, []any{"done_at", "soon"}} {
		if _, err := decodeRecord("k", v); err == nil {
			t.Errorf("decodeRecord(%#v) accepted", v)
		}
	}
}

func TestMillis(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want int64
	}{{0, 0}, {-time.Second, 0}, {time.Nanosecond, 1}, {time.Millisecond, 1}, {1500 * time.Microsecond, 2}, {time.Hour, 3_600_000}} {
		if got := millis(tt.d); got != tt.want {
			t.Errorf("millis(%v) = %d, want %d", tt.d, got, tt.want)
		}
	}
}

func FuzzWonClaim(f *testing.F) {
	f.Add("won 3 1796053951484")
	f.Add("won 1 2 finger print\x00")
	f.Add("won 1")
	f.Fuzz(func(t *testing.T, reply string) {
		r, err := wonClaim(gate.ClaimRequest{Key: "k", Token: "t", Owner: "o"}, 1000, reply)
		if err != nil {
			return
		}
		parts := strings.SplitN(strings.TrimPrefix(reply, "won "), " ", 3)
		if n, err := strconv.ParseInt(parts[0], 10, 64); err != nil || n != r.Fence {
			t.Fatalf("fence %q decoded as %d", parts[0], r.Fence)
		}
		if len(parts) == 3 && string(r.Fingerprint) != parts[2] {
			t.Fatalf("fingerprint %q decoded as %q", parts[2], r.Fingerprint)
		}
		if r.ExpiresAt.Sub(r.LeaseExpiry) != time.Second {
			t.Fatalf("lease %v, expiry %v: want 1 s apart", r.LeaseExpiry, r.ExpiresAt)
		}
		if r.State != gate.StateClaimed || r.ClaimToken != "t" || r.Owner != "o" || r.Key != "k" {
			t.Fatalf("record %+v", r)
		}
	})
}

func TestDecodeValue(t *testing.T) {
	const exp = 1796053951484
	ms := func(x int64) time.Time { return time.UnixMilli(x).UTC() }
	tests := []struct {
		name   string
		v      string
		expiry int64
		want   gate.Record
	}{
		{"claim", encodeClaim(gate.ClaimRequest{Token: "tok", Owner: "own", Fingerprint: []byte("fp\x00")}, 60000), exp,
			gate.Record{State: gate.StateClaimed, Fence: 1, LeaseExpiry: ms(exp - 60000), ExpiresAt: ms(exp),
				ClaimToken: "tok", Owner: "own", Fingerprint: []byte("fp\x00")}},
		{"done with a lease past its expiry", "og1 done 7 -5 100 1 0 0\nxres\nult", exp,
			gate.Record{State: gate.StateDone, Fence: 7, LeaseExpiry: ms(exp + 5), DoneAt: ms(exp - 100), ExpiresAt: ms(exp),
				ClaimToken: "x", Result: []byte("res\nult")}},
		{"unknown: epoch ms, no expiry", "og1 unknown 9007199254740991 1700000000000  0 1 0\no", -1,
			gate.Record{State: gate.StateUnknown, Fence: 9007199254740991, LeaseExpiry: ms(1700000000000), Owner: "o"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeValue("k", tt.v, tt.expiry)
			tt.want.Key = "k"
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("decodeValue(%q) =\n%+v, %v; want\n%+v", tt.v, got, err, tt.want)
			}
		})
	}
	for _, v := range []string{"", "x", "og1 claimed 1 2 3", "og1 done 1 2  0 0 9\nshort", "og1 bogus 1 2  0 0 0\n",
		"og1 done -1 2  0 0 0\n", "og1 done 1 2  -1 0 0\n", "og1 done 1 x  0 0 0\n", "og2 done 1 2  0 0 0\n", "og1 done 1 2  0 0\n",
		"og1 done 1 2  9223372036854775807 1 0\nabc", "og1 done 1 2  1 9223372036854775807 9223372036854775807\nabc"} {
		if _, err := decodeValue("k", v, exp); !errors.Is(err, errNotRecord) {
			t.Errorf("decodeValue(%q): err = %v, want errNotRecord", v, err)
		}
	}
}

// FuzzDecodeValue: any claim encodeClaim builds decodes to its request, and no
// value makes decodeValue panic.
func FuzzDecodeValue(f *testing.F) {
	f.Add("tok", "owner", []byte("fp"), int64(60000), "og1 done 1 2 3 0 0 0\n")
	f.Fuzz(func(t *testing.T, token, owner string, fp []byte, ttl int64, raw string) {
		_, _ = decodeValue("k", raw, 1)
		if ttl < 0 {
			ttl = -ttl
		}
		r, err := decodeValue("k", encodeClaim(gate.ClaimRequest{Token: token, Owner: owner, Fingerprint: fp}, ttl), 1<<50)
		if err != nil {
			t.Fatal(err)
		}
		if r.ClaimToken != token || r.Owner != owner || string(r.Fingerprint) != string(fp) || r.Fence != 1 ||
			r.State != gate.StateClaimed || r.ExpiresAt.Sub(r.LeaseExpiry) != time.Duration(ttl)*time.Millisecond {
			t.Fatalf("round trip of %q %q %q %d: %+v", token, owner, fp, ttl, r)
		}
	})
}
