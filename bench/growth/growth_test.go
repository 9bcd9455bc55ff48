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

// Sizes are the stored record counts compared.
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
// "rand" only. The last case repeats SQLite with random keys and a 64 MiB page
// cache instead of the driver's 2 MB default (SQLite's cache_size -2000), to
// show what closes the gap there.
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
	{"store=sqlite/keys=rand/cache=64MiB", stores.SQLite, "rand", "_pragma=cache_size(-65536)"},
}

// calls counts BenchmarkGrowth's runs (-count), to alternate the sizes' order.
var calls atomic.Int64

// BenchmarkGrowth measures a claim plus a complete on a fresh key (one
// message's store work, the store's own calls without the gate) against a
// store holding 1k and 1m records. Compare with benchstat -col /records; the
// ratio 1m/1k is the growth figure. Each 1k run first deletes the keys earlier
// runs added (and, on PostgreSQL, vacuums them away), so it starts from its
// thousand records; the 1m stores keep theirs, a few thousand more than a
// million by the last run (under 2% with -benchtime 2000x -count 10). The two
// sizes run in turns, 1k first on odd runs and 1m first on even ones, so what
// one store leaves behind (a server's background writes, say) does not always
// land on the same size.
//
// PostgreSQL runs with synchronous_commit=off and SQLite with
// synchronous=NORMAL (WAL), so the figures measure statements and indexes,
// which grow with the table, rather than the disk's flush, which does not and
// would only dilute the ratio toward 1.
func BenchmarkGrowth(b *testing.B) {
	order := sizes
	if calls.Add(1)%2 == 0 {
		order = []struct {
			label string
			n     int
		}{sizes[1], sizes[0]}
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for _, size := range order {
				b.Run("records="+size.label, func(b *testing.B) {
					benchGrowth(b, seeded(b, c.name, c.kind, c.order, c.params, size.n), size.n, c.order)
				})
			}
		})
	}
}

func benchGrowth(b *testing.B, s *store, n int, order string) {
	if n < 100_000 {
		if err := s.reset(); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	for b.Loop() {
		key := newKey(order)
		res, err := s.Backend.Claim(ctx, gate.ClaimRequest{Key: key, Token: key, Owner: "bench/growth", Lease: lease, TTL: ttl})
		if err != nil || res.Status != gate.Won {
			b.Fatalf("claim %s: %v %v", key, res.Status, err)
		}
		if ok, err := s.Backend.Complete(ctx, gate.Completion{Key: key, Fence: res.Record.Fence, TTL: ttl}); err != nil || !ok {
			b.Fatalf("complete %s: %v %v", key, ok, err)
		}
	}
	b.StopTimer()
	if got, err := s.count(); err != nil {
		b.Fatal(err)
	} else if got < n {
		b.Fatalf("the store holds %d records, want at least %d", got, n)
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
