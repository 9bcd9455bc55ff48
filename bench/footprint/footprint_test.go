package footprint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
)

// liveHeap returns the heap in use after a full collection, in bytes.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC() // a second cycle frees what the first one's finalizers released
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// messageKey is a gate key as the push handler stores it: the namespace and a
// 16-digit Pub/Sub message id.
func messageKey(i int) string { return fmt.Sprintf("bench:%016d", 2070443601311540+i) }

// BenchmarkMemgateRecord stores b.N done records in one memgate.Store through
// a gate, as a worker's deliveries would write them (namespaced message-id
// key, the gate's random claim token, its "<host>/<pid>" owner, no payload
// fingerprint or result), and reports the live heap they take per record.
// Run it with a large -benchtime (100000x): the map's own overhead per entry
// depends on how full it is.
func BenchmarkMemgateRecord(b *testing.B) {
	ctx := context.Background()
	body := func(context.Context, gate.Claim) error { return nil }
	quiet := slog.New(slog.DiscardHandler)
	before := liveHeap()
	s := memgate.New(nil)
	g, err := gate.New(s, &gate.Options{Logger: quiet, Lease: time.Minute, TTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		if err := g.Lock(ctx, messageKey(i), body); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	after := liveHeap()
	if s.Len() != b.N {
		b.Fatalf("the store holds %d records, want %d", s.Len(), b.N)
	}
	b.ReportMetric(float64(int64(after)-int64(before))/float64(b.N), "bytes/record")
	runtime.KeepAlive(g)
	runtime.KeepAlive(s)
}

// stubBackend answers every claim Won and every completion true, storing
// nothing, so only the gate's own memory is measured. The embedded Backend is
// nil: the benchmark's Locks call only Claim and Complete.
type stubBackend struct{ gate.Backend }

func (stubBackend) Claim(_ context.Context, r gate.ClaimRequest) (gate.ClaimResult, error) {
	now := time.Now()
	return gate.ClaimResult{Status: gate.Won, Record: gate.Record{
		Key: r.Key, State: gate.StateClaimed, Fence: 1, LeaseExpiry: now.Add(r.Lease),
		ExpiresAt: now.Add(r.Lease + r.TTL), ClaimToken: r.Token, Owner: r.Owner,
	}}, nil
}
func (stubBackend) Complete(context.Context, gate.Completion) (bool, error) { return true, nil }
func (stubBackend) Release(context.Context, string, int64) (bool, error)    { return true, nil }

// BenchmarkGateCacheEntry fills a gate's terminal cache (Options.CacheSize =
// b.N) with done keys and reports the live heap per cached key: what
// CacheSize costs a worker.
func BenchmarkGateCacheEntry(b *testing.B) {
	ctx := context.Background()
	body := func(context.Context, gate.Claim) error { return nil }
	before := liveHeap()
	// b.N must be known before the loop, to size the cache: no b.Loop here.
	g, err := gate.New(stubBackend{}, &gate.Options{Logger: slog.New(slog.DiscardHandler), CacheSize: b.N, Lease: time.Minute, TTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		if err := g.Lock(ctx, messageKey(i), body); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// Every key must be cached: a second delivery of the first is a duplicate
	// answered without the store, which would have answered Won.
	if err := g.Lock(ctx, messageKey(0), body); !errors.Is(err, gate.ErrDuplicate) {
		b.Fatalf("second delivery of the first key = %v, want a duplicate from the cache", err)
	}
	after := liveHeap()
	b.ReportMetric(float64(int64(after)-int64(before))/float64(b.N), "bytes/record")
	runtime.KeepAlive(g)
}
