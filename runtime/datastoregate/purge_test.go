package datastoregate_test

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/oncegate/oncegate/runtime/gate"
)

// seedPurge stores expired done records, live claims and unknown records.
func seedPurge(t *testing.T, f *fixture, expired, live, unknown int) {
	t.Helper()
	for i := range expired {
		k := fmt.Sprint("done-", i)
		r := f.win(t, k, "t")
		if ok, err := f.s.Complete(f.ctx, gate.Completion{Key: k, Fence: r.Fence, TTL: time.Second}); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	for i := range unknown {
		k := fmt.Sprint("unknown-", i)
		r := f.win(t, k, "t")
		if ok, err := f.s.MarkUnknown(f.ctx, k, r.Fence); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	f.clock.Advance(2 * time.Second)
	for i := range live {
		f.win(t, fmt.Sprint("live-", i), "t")
	}
}

func TestPurge(t *testing.T) {
	cases := []struct {
		name  string
		limit int
		lost  bool
		want  []int // successive Purge results
	}{
		{"all in pages", 0, false, []int{250, 0}},
		{"limited", 30, false, []int{30, 30, 30}},
		{"lost commit counted once", 0, true, []int{250, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			seedPurge(t, f, 250, 10, 5)
			if tc.lost {
				f.srv.DropCommitResponses(1, codes.Unavailable)
			}
			for i, want := range tc.want {
				n, err := f.s.Purge(f.ctx, tc.limit)
				if err != nil || n != want {
					t.Fatalf("Purge #%d = %d, %v; want %d", i+1, n, err, want)
				}
			}
			left := 250 + 10 + 5
			for _, n := range tc.want {
				left -= n
			}
			if got := f.srv.Len(); got != left {
				t.Fatalf("%d entities left, want %d", got, left)
			}
			for i := range 10 {
				if _, ok, _ := f.s.Inspect(f.ctx, fmt.Sprint("live-", i)); !ok {
					t.Fatalf("live-%d purged", i)
				}
			}
			for i := range 5 {
				if res, err := f.s.Claim(f.ctx, claimReq(fmt.Sprint("unknown-", i), "x")); err != nil || res.Status != gate.Unknown {
					t.Fatalf("unknown-%d: %v %v", i, res.Status, err)
				}
			}
		})
	}
}

func TestListUnresolvedLimitAndOrder(t *testing.T) {
	f := newFixture(t, nil)
	for i := range 5 {
		k := fmt.Sprint("u", 4-i) // u4 claimed first, so its lease expires first
		r := f.win(t, k, "t")
		if ok, err := f.s.MarkUnknown(f.ctx, k, r.Fence); !ok || err != nil {
			t.Fatal(ok, err)
		}
		f.clock.Advance(time.Second)
	}
	got, err := f.s.ListUnresolved(f.ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Key != "u4" || got[1].Key != "u3" || got[2].Key != "u2" {
		t.Fatalf("ListUnresolved(3) = %v, want u4 u3 u2", got)
	}
}
