package gate_test

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tink-crypto/tink-go/v2/aead"
	"github.com/tink-crypto/tink-go/v2/keyset"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
)

type receipt struct {
	ChargeID string `json:"charge_id"`
	Cents    int    `json:"cents"`
}

func newGate(t *testing.T, b gate.Backend, opts gate.Options) *gate.Gate {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	g, err := gate.New(b, &opts)
	if err != nil {
		t.Fatalf("gate.New: %v", err)
	}
	return g
}

func TestDoReplaysStoredResultInAFreshProcess(t *testing.T) {
	s := memgate.New(nil)
	ctx := context.Background()
	call := gate.Call{Key: "charge-1", Payload: []byte(`{"cents":500}`)}
	runs := 0
	charge := func(context.Context, gate.Claim) (receipt, error) { runs++; return receipt{"ch_1", 500}, nil }
	v, executed, err := gate.Do(ctx, newGate(t, s, gate.Options{Namespace: "pay"}), call, charge)
	if err != nil || !executed || v.ChargeID != "ch_1" {
		t.Fatalf("first Do = %+v, %v, %v", v, executed, err)
	}
	// A second instance (a fresh Gate) sees the stored result and the fingerprint.
	other := newGate(t, s, gate.Options{Namespace: "pay"})
	v, executed, err = gate.Do(ctx, other, call, charge)
	if err != nil || executed || v != (receipt{"ch_1", 500}) || runs != 1 {
		t.Fatalf("duplicate Do = %+v, executed %v, %v, runs %d; want the stored receipt", v, executed, err, runs)
	}
	_, _, err = gate.Do(ctx, other, gate.Call{Key: "charge-1", Payload: []byte(`{"cents":900}`)}, charge)
	if !errors.Is(err, gate.ErrKeyReuse) || runs != 1 {
		t.Fatalf("different payload after completion: %v, want ErrKeyReuse", err)
	}
}

func TestDoKeyReuseWhileInFlight(t *testing.T) {
	g := newGate(t, memgate.New(nil), gate.Options{})
	ctx := context.Background()
	_, _, err := gate.Do(ctx, g, gate.Call{Key: "k", Payload: []byte("a")}, func(ctx context.Context, _ gate.Claim) (int, error) {
		_, _, err := gate.Do(ctx, g, gate.Call{Key: "k", Payload: []byte("b")}, func(context.Context, gate.Claim) (int, error) { return 2, nil })
		if !errors.Is(err, gate.ErrKeyReuse) {
			t.Errorf("different payload while in flight: %v, want ErrKeyReuse", err)
		}
		return 1, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDoPermanentFailureIsReturnedWithoutRunning(t *testing.T) {
	g := newGate(t, memgate.New(nil), gate.Options{})
	ctx := context.Background()
	runs := 0
	fn := func(context.Context, gate.Claim) (int, error) {
		runs++
		return 0, gate.Permanent(errors.New("invalid card"))
	}
	if _, _, err := gate.Do(ctx, g, gate.Call{Key: "k"}, fn); gate.OutcomeOf(err) != gate.OutcomePermanent {
		t.Fatalf("first: %v", err)
	}
	if _, executed, err := gate.Do(ctx, g, gate.Call{Key: "k"}, fn); !errors.Is(err, gate.ErrFailed) || executed || runs != 1 {
		t.Fatalf("second: %v executed %v runs %d, want ErrFailed without running", err, executed, runs)
	}
}

func TestDoWaitsForInFlightHolder(t *testing.T) {
	g := newGate(t, memgate.New(nil), gate.Options{})
	ctx := context.Background()
	started, finish := make(chan struct{}), make(chan struct{})
	go func() {
		_, _, _ = gate.Do(ctx, g, gate.Call{Key: "k"}, func(context.Context, gate.Claim) (string, error) {
			close(started)
			<-finish
			return "holder's result", nil
		})
	}()
	<-started
	time.AfterFunc(100*time.Millisecond, func() { close(finish) })
	v, executed, err := gate.Do(ctx, g, gate.Call{Key: "k", Wait: 5 * time.Second}, func(context.Context, gate.Claim) (string, error) {
		return "second run", nil
	})
	if err != nil || executed || v != "holder's result" {
		t.Fatalf("waiting Do = %q, %v, %v; want the holder's result", v, executed, err)
	}
	// Without Wait, the same situation fails fast.
	started2, finish2 := make(chan struct{}), make(chan struct{})
	defer close(finish2)
	go func() {
		_, _, _ = gate.Do(ctx, g, gate.Call{Key: "k2"}, func(context.Context, gate.Claim) (string, error) { close(started2); <-finish2; return "", nil })
	}()
	<-started2
	if _, _, err := gate.Do(ctx, g, gate.Call{Key: "k2", Wait: 120 * time.Millisecond}, func(context.Context, gate.Claim) (string, error) { return "", nil }); !errors.Is(err, gate.ErrInProgress) {
		t.Fatalf("wait past the limit: %v, want ErrInProgress", err)
	}
}

// counting counts claims that reach the store.
type counting struct {
	*memgate.Store
	claims atomic.Int32
}

func (c *counting) Claim(ctx context.Context, r gate.ClaimRequest) (gate.ClaimResult, error) {
	c.claims.Add(1)
	return c.Store.Claim(ctx, r)
}

func TestTerminalCacheSkipsStoreForRepeatedDuplicates(t *testing.T) {
	b := &counting{Store: memgate.New(nil)}
	g := newGate(t, b, gate.Options{CacheSize: 16})
	ctx := context.Background()
	fn := func(context.Context, gate.Claim) (int, error) { return 7, nil }
	if _, _, err := gate.Do(ctx, g, gate.Call{Key: "k", Payload: []byte("p")}, fn); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if v, executed, err := gate.Do(ctx, g, gate.Call{Key: "k", Payload: []byte("p")}, fn); err != nil || executed || v != 7 {
			t.Fatalf("cached duplicate = %v %v %v", v, executed, err)
		}
	}
	if _, _, err := gate.Do(ctx, g, gate.Call{Key: "k", Payload: []byte("other")}, fn); !errors.Is(err, gate.ErrKeyReuse) {
		t.Fatalf("cached key reuse: %v", err)
	}
	if n := b.claims.Load(); n != 1 {
		t.Fatalf("store claims = %d, want 1 (duplicates answered from the cache)", n)
	}
	// A claim in progress is never cached: each retry asks the store.
	_, _ = b.Claim(ctx, gate.ClaimRequest{Key: "held", Token: "x", Lease: time.Hour, TTL: time.Hour})
	for range 3 {
		_ = g.Lock(ctx, "held", ok)
	}
	if n := b.claims.Load(); n != 5 {
		t.Fatalf("store claims = %d, want 5 (in-progress answers are not cached)", n)
	}
}

func newAEAD(t *testing.T, h *keyset.Handle) gate.AEAD {
	t.Helper()
	a, err := aead.New(h)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestSealedResultsRotationAndTampering(t *testing.T) {
	h, err := keyset.NewHandle(aead.AES256GCMKeyTemplate())
	if err != nil {
		t.Fatal(err)
	}
	s := memgate.New(nil)
	ctx := context.Background()
	g := newGate(t, s, gate.Options{Namespace: "pay", AEAD: newAEAD(t, h)})
	secret := receipt{"ch_secret", 4200}
	if _, _, err := gate.Do(ctx, g, gate.Call{Key: "k"}, func(context.Context, gate.Claim) (receipt, error) { return secret, nil }); err != nil {
		t.Fatal(err)
	}
	stored, _, _ := s.Inspect(ctx, "pay:k")
	if len(stored.Result) == 0 || string(stored.Result) == `{"charge_id":"ch_secret","cents":4200}` {
		t.Fatalf("stored result is not sealed: %q", stored.Result)
	}
	// Rotate: add a new primary key; results sealed under the old one still open.
	m := keyset.NewManagerFromHandle(h)
	id, err := m.Add(aead.AES256GCMKeyTemplate())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetPrimary(id); err != nil {
		t.Fatal(err)
	}
	rotated, _ := m.Handle()
	g2 := newGate(t, s, gate.Options{Namespace: "pay", AEAD: newAEAD(t, rotated)})
	nothing := func(context.Context, gate.Claim) (receipt, error) { return receipt{}, errors.New("must not run") }
	if v, _, err := gate.Do(ctx, g2, gate.Call{Key: "k"}, nothing); err != nil || v != secret {
		t.Fatalf("after rotation: %+v, %v", v, err)
	}
	// A sealed result moved to another key does not open.
	r, _ := s.Claim(ctx, gate.ClaimRequest{Key: "pay:other", Token: "t", Lease: time.Hour, TTL: time.Hour})
	_, _ = s.Complete(ctx, gate.Completion{Key: "pay:other", Fence: r.Record.Fence, TTL: time.Hour, Result: stored.Result})
	if _, _, err := gate.Do(ctx, g2, gate.Call{Key: "other"}, nothing); !errors.Is(err, gate.ErrSealedResult) {
		t.Fatalf("moved ciphertext: %v, want ErrSealedResult", err)
	}
	// A tampered ciphertext is an error, never a result.
	bad := append([]byte(nil), stored.Result...)
	bad[len(bad)-1] ^= 1
	r, _ = s.Claim(ctx, gate.ClaimRequest{Key: "pay:tampered", Token: "t", Lease: time.Hour, TTL: time.Hour})
	_, _ = s.Complete(ctx, gate.Completion{Key: "pay:tampered", Fence: r.Record.Fence, TTL: time.Hour, Result: bad})
	if v, _, err := gate.Do(ctx, g2, gate.Call{Key: "tampered"}, nothing); !errors.Is(err, gate.ErrSealedResult) || v != (receipt{}) {
		t.Fatalf("tampered: %+v, %v, want ErrSealedResult and no value", v, err)
	}
}

// rawCodec stores a []byte result as is and decodes without a copy, as a
// codec for opaque bytes may.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return v.([]byte), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*v.(*[]byte) = data
	return nil
}

// TestTerminalCacheHandsOutCopies: what a cached duplicate answers (Do's
// decoded value, Run's Record, a RecordError's Record) is the caller's own,
// so a caller that changes it changes no later duplicate's answer.
func TestTerminalCacheHandsOutCopies(t *testing.T) {
	g := newGate(t, memgate.New(nil), gate.Options{CacheSize: 16, Codec: rawCodec{}})
	ctx := context.Background()
	want := []byte("receipt-1")
	fn := func(context.Context, gate.Claim) ([]byte, error) { return bytes.Clone(want), nil }
	for range 2 { // the first runs, the second caches the store's done record
		if _, _, err := gate.Do(ctx, g, gate.Call{Key: "k"}, fn); err != nil {
			t.Fatal(err)
		}
	}
	v, executed, err := gate.Do(ctx, g, gate.Call{Key: "k"}, fn)
	if err != nil || executed || !bytes.Equal(v, want) {
		t.Fatalf("cached duplicate = %q %v %v", v, executed, err)
	}
	v[0] = 'X'
	res := g.Run(ctx, gate.VerbLock, "k", ok)
	if res.Outcome != gate.OutcomeDuplicate || !bytes.Equal(res.Record.Result, want) {
		t.Fatalf("after a caller changed its value: Run = %v, Record.Result %q; want duplicate, %q", res.Outcome, res.Record.Result, want)
	}
	res.Record.Result[1] = 'X'
	var re *gate.RecordError
	if err := g.Lock(ctx, "k", ok); !errors.As(err, &re) || !bytes.Equal(re.Record.Result, want) {
		t.Fatalf("after a caller changed Run's Record: Lock = %v; want a duplicate holding %q", err, want)
	}
	re.Record.Result[2] = 'X'
	if v, _, err := gate.Do(ctx, g, gate.Call{Key: "k"}, fn); err != nil || !bytes.Equal(v, want) {
		t.Fatalf("after a caller changed a RecordError's Record: Do = %q, %v; want %q", v, err, want)
	}
}
