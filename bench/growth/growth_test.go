package growth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncegate/oncegate/bench/stores"
	"github.com/oncegate/oncegate/runtime/gate"
)

// sizes are the stored record counts compared.
var sizes = []struct {
	label string
	n     int
}{{"1k", 1_000}, {"1m", 1_000_000}}

// Lease and TTL of the benchmarked and seeded records: long enough that
// nothing expires during a run.
const (
	lease = time.Minute
	ttl   = time.Hour
)

// cases are the stores compared. Key order matters where the key index is a
// B-tree (PostgreSQL, SQLite): "seq" keys grow like Pub/Sub message ids (the
// default key), so new keys land together at one end of the index; "rand" keys
// are random, like UUID business keys, so each lands on another index page.
// Redis keeps records in a hash table, where order does not matter: it runs
// "rand" only.
var cases = []struct {
	name   string
	kind   stores.Kind
	order  string
	params string // SQLite DSN parameters beyond synchronous=NORMAL
}{
	{"store=redis/keys=rand", stores.Redis, "rand", ""},
	{"store=postgres/keys=seq", stores.Postgres, "seq", ""},
	{"store=postgres/keys=rand", stores.Postgres, "rand", ""},
	{"store=sqlite/keys=seq", stores.SQLite, "seq", ""},
	{"store=sqlite/keys=rand", stores.SQLite, "rand", ""},
}

// BenchmarkGrowth measures a claim plus a complete on a fresh key (one
// message's store work, the store's own calls without the gate) against a
// store holding a thousand records and one holding a million, in pairs: each
// iteration does one message on each store, in turns (1k first on even
// iterations, 1m first on odd ones), so a burst of load from elsewhere on the
// machine hits both sizes alike. It reports ns/op-1k and ns/op-1m (the mean
// per message on each store) and 1m/1k, their ratio: the growth figure, one
// per run, which benchstat summarises with its confidence interval. (ns/op is
// the pair's total.)
//
// Each run first deletes the keys earlier runs added to the 1k store (and, on
// PostgreSQL, vacuums them away), so it starts from its thousand records; the
// 1m store keeps them, a few thousand more than a million by the last run
// (under 2% with -benchtime 2000x -count 10).
//
// PostgreSQL runs with synchronous_commit=off and SQLite with
// synchronous=NORMAL (WAL), so the figures measure statements and indexes,
// which grow with the table, rather than the disk's flush, which does not and
// would only dilute the ratio toward 1.
func BenchmarkGrowth(b *testing.B) {
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			small := seeded(b, c.name, c.kind, c.order, c.params, sizes[0].n)
			large := seeded(b, c.name, c.kind, c.order, c.params, sizes[1].n)
			if err := small.reset(); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			var spent [2]time.Duration
			pair := [2]*store{small, large}
			n := 0
			for b.Loop() {
				for j := range 2 {
					i := j ^ n&1 // alternate which size goes first
					start := time.Now()
					message(ctx, b, pair[i].Store, newKey(c.order))
					spent[i] += time.Since(start)
				}
				n++
			}
			b.StopTimer()
			b.ReportMetric(float64(spent[0].Nanoseconds())/float64(n), "ns/op-1k")
			b.ReportMetric(float64(spent[1].Nanoseconds())/float64(n), "ns/op-1m")
			b.ReportMetric(float64(spent[1])/float64(spent[0]), "1m/1k")
			for i, s := range pair {
				if got, err := s.count(); err != nil {
					b.Fatal(err)
				} else if got < sizes[i].n {
					b.Fatalf("the %s store holds %d records, want at least %d", sizes[i].label, got, sizes[i].n)
				}
			}
		})
	}
}

// message does one message's store work on s: claim key, then complete it.
func message(ctx context.Context, b *testing.B, s *stores.Store, key string) {
	res, err := s.Backend.Claim(ctx, gate.ClaimRequest{Key: key, Token: key, Owner: "bench/growth", Lease: lease, TTL: ttl})
	if err != nil || res.Status != gate.Won {
		b.Fatalf("claim %s: %v %v", key, res.Status, err)
	}
	if ok, err := s.Backend.Complete(ctx, gate.Completion{Key: key, Fence: res.Record.Fence, TTL: ttl}); err != nil || !ok {
		b.Fatalf("complete %s: %v %v", key, ok, err)
	}
}

// seq numbers the "seq" keys of the whole test binary, so they keep growing.
var seq atomic.Int64

// newKey is a fresh key in the benchmark's own key space ("new:"): the next
// 16-digit number for "seq", 16 random hex digits for "rand".
func newKey(order string) string {
	if order == "seq" {
		return fmt.Sprintf("%s%016d", newPrefix, seq.Add(1))
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return newPrefix + hex.EncodeToString(b[:])
}

// Key spaces: seeded records, the template they copy, the benchmark's own.
const (
	seedPrefix = "seed:"
	template   = "template"
	newPrefix  = "new:"
)
