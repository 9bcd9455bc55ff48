package redisgate

import (
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
