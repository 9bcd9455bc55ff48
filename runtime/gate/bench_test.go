package gate_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
)

// BenchmarkLockMemory measures one fresh key through Lock (claim, body, complete)
// on the memory backend: the gateway's own overhead without a network.
func BenchmarkLockMemory(b *testing.B) {
	g, _ := gate.New(memgate.New(nil), &gate.Options{Logger: quiet})
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := g.Lock(ctx, strconv.Itoa(i), ok); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLockMemoryDuplicate measures a redelivery of a done key.
func BenchmarkLockMemoryDuplicate(b *testing.B) {
	g, _ := gate.New(memgate.New(nil), &gate.Options{Logger: quiet})
	ctx := context.Background()
	_ = g.Lock(ctx, "k", ok)
	b.ReportAllocs()
	for b.Loop() {
		if err := g.Lock(ctx, "k", ok); err == nil {
			b.Fatal("duplicate ran")
		}
	}
}

// BenchmarkClaimCompleteMemoryFloor is the floor: the backend's claim and
// complete called directly, without the gate.
func BenchmarkClaimCompleteMemoryFloor(b *testing.B) {
	s := memgate.New(nil)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		k := strconv.Itoa(i)
		r, _ := s.Claim(ctx, gate.ClaimRequest{Key: k, Token: "t", Lease: gate.DefaultLease, TTL: gate.DefaultTTL})
		_, _ = s.Complete(ctx, gate.Completion{Key: k, Fence: r.Record.Fence, TTL: gate.DefaultTTL})
	}
}
