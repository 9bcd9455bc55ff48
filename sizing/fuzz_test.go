package sizing

import (
	"math/big"
	"strings"
	"testing"
	"time"
)

// FuzzValidate feeds arbitrary plans, overflowing sums included, to Validate
// and Recommend: neither panics, every violation is one line, and a plan
// Validate accepts satisfies invariants 4 and 5 in exact arithmetic.
func FuzzValidate(f *testing.F) {
	f.Add(int64(60e9), int64(0), int64(20e9), int64(60e9), int64(0), int64(0), int64(0), int64(0), 0, int64(0), int64(0), int64(0), int64(0))
	f.Add(int64(1<<62), int64(1<<62), int64(0), int64(1<<62), int64(1<<62), int64(600e9), int64(600e9), int64(600e9), 100, int64(3600e9), int64(1<<62), int64(1<<62), int64(1<<62))
	f.Add(int64(120e9), int64(1e6), int64(0), int64(60e9), int64(0), int64(0), int64(0), int64(0), 0, int64(0), int64(0), int64(0), int64(0))
	f.Add(int64(60e9), int64(0), int64(20e9), int64(60e9), int64(0), int64(0), int64(0), int64(0), 0, int64(0), int64(0), int64(0), int64(300e9))
	f.Fuzz(func(t *testing.T, lease, ttl, hb, wd, grace, ack, minB, maxB int64, n int, rt, st, win, outage int64) {
		p := Plan{Lease: time.Duration(lease), TTL: time.Duration(ttl), Heartbeat: time.Duration(hb), WorkDeadline: time.Duration(wd),
			ShutdownGrace: time.Duration(grace), AckDeadline: time.Duration(ack), MinBackoff: time.Duration(minB), MaxBackoff: time.Duration(maxB),
			MaxDeliveryAttempts: n, RequestTimeout: time.Duration(rt), StoreTimeout: time.Duration(st), DeadLetterReplayWindow: time.Duration(win),
			StoreOutage: time.Duration(outage)}
		for _, q := range []Plan{p, must(Recommend(p))} {
			err := q.Validate()
			if err != nil {
				for _, line := range strings.Split(err.Error(), "\n  - ")[1:] {
					if strings.Contains(line, "\n") {
						t.Fatalf("violation spans lines: %q", line)
					}
				}
				continue
			}
			r := q.WithDefaults()
			bi := func(d time.Duration) *big.Int { return big.NewInt(int64(d)) }
			budget := new(big.Int).Add(bi(r.WorkDeadline), new(big.Int).Mul(bi(r.StoreTimeout), big.NewInt(StoreCallsPerDelivery)))
			if budget.Cmp(bi(r.AckDeadline)) > 0 || budget.Cmp(bi(r.RequestTimeout)) > 0 {
				t.Fatalf("plan %+v validates with a budget of %v past its deadlines", r, budget)
			}
			h := new(big.Int).Mul(bi(r.AckDeadline), big.NewInt(int64(r.MaxDeliveryAttempts)))
			h.Add(h, new(big.Int).Mul(bi(r.MaxBackoff), big.NewInt(int64(r.MaxDeliveryAttempts-1))))
			h.Add(h, bi(r.DeadLetterReplayWindow))
			if bi(r.TTL).Cmp(h) < 0 {
				t.Fatalf("plan %+v validates with a TTL under its horizon %v", r, h)
			}
		}
	})
}

func must(p Plan, _ error) Plan { return p }
