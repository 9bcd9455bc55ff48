package gate_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gatetest"
	"github.com/oncegate/oncegate/runtime/memgate"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type fixture struct {
	clock *gatetest.Clock
	store *memgate.Store
	gate  *gate.Gate
}

func newFixture(t *testing.T, opts gate.Options) *fixture {
	t.Helper()
	c := gatetest.NewClock(gatetest.Epoch)
	s := memgate.New(&memgate.Options{Now: c.Now})
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	if opts.Lease == 0 {
		opts.Lease = time.Minute
	}
	g, err := gate.New(s, &opts)
	if err != nil {
		t.Fatalf("gate.New: %v", err)
	}
	return &fixture{clock: c, store: s, gate: g}
}

func (f *fixture) record(t *testing.T, key string) gate.Record {
	t.Helper()
	r, ok, err := f.store.Inspect(context.Background(), key)
	if err != nil || !ok {
		t.Fatalf("Inspect(%q) = %v, %v", key, ok, err)
	}
	return r
}

func ok(context.Context, gate.Claim) error { return nil }

func TestRedeliveryIsDuplicate(t *testing.T) {
	f := newFixture(t, gate.Options{Namespace: "orders"})
	ctx := context.Background()
	runs := 0
	body := func(context.Context, gate.Claim) error { runs++; return nil }
	if err := f.gate.Lock(ctx, "m-1", body); err != nil {
		t.Fatalf("first delivery: %v", err)
	}
	err := f.gate.Lock(ctx, "m-1", body)
	var re *gate.RecordError
	if !errors.Is(err, gate.ErrDuplicate) || !errors.As(err, &re) || re.Record.Key != "orders:m-1" || re.Record.Fence != 1 {
		t.Fatalf("redelivery: err = %v, want ErrDuplicate carrying record orders:m-1 fence 1", err)
	}
	if runs != 1 || gate.OutcomeOf(err) != gate.OutcomeDuplicate || !gate.OutcomeOf(err).Ack() {
		t.Fatalf("runs = %d, outcome %v", runs, gate.OutcomeOf(err))
	}
}

func TestConcurrentDuplicatesRunOneBody(t *testing.T) {
	f := newFixture(t, gate.Options{})
	var runs atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f.gate.Lock(context.Background(), "m", func(context.Context, gate.Claim) error {
				runs.Add(1)
				<-release
				return nil
			})
		}()
	}
	for f.store.Len() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // let the other seven reach the store
	close(release)
	wg.Wait()
	inProgress := 0
	for _, err := range errs {
		if errors.Is(err, gate.ErrInProgress) {
			inProgress++
			if gate.OutcomeOf(err).Ack() {
				t.Fatal("in-progress must nack")
			}
		}
	}
	if runs.Load() != 1 || inProgress != 7 {
		t.Fatalf("runs = %d, in-progress = %d; want 1 and 7", runs.Load(), inProgress)
	}
}

func TestCrashedHolderSelfHealsAfterLease(t *testing.T) {
	f := newFixture(t, gate.Options{Lease: time.Minute})
	ctx := context.Background()
	// A holder claims and dies without completing or releasing.
	if _, err := f.store.Claim(ctx, gate.ClaimRequest{Key: "m", Token: "dead", Lease: time.Minute, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if err := f.gate.Lock(ctx, "m", ok); !errors.Is(err, gate.ErrInProgress) {
		t.Fatalf("while the dead holder's lease is live: %v, want ErrInProgress", err)
	}
	f.clock.Advance(time.Minute + time.Second)
	var fence int64
	if err := f.gate.Lock(ctx, "m", func(_ context.Context, c gate.Claim) error { fence = c.Fence; return nil }); err != nil {
		t.Fatalf("after the lease lapsed: %v", err)
	}
	if fence != 2 {
		t.Fatalf("reclaim fence = %d, want 2", fence)
	}
}

func TestZombieIsFencedOut(t *testing.T) {
	f := newFixture(t, gate.Options{Lease: time.Minute})
	ctx := context.Background()
	var newcomerFence int64
	err := f.gate.Lock(ctx, "m", func(context.Context, gate.Claim) error {
		// The holder stalls past its lease; another instance reclaims and finishes.
		f.clock.Advance(2 * time.Minute)
		if err := f.gate.Lock(ctx, "m", func(_ context.Context, c gate.Claim) error { newcomerFence = c.Fence; return nil }); err != nil {
			t.Errorf("newcomer: %v", err)
		}
		return nil
	})
	if !errors.Is(err, gate.ErrFencedOut) || gate.OutcomeOf(err) != gate.OutcomeFencedOut || !gate.OutcomeOf(err).Ack() {
		t.Fatalf("zombie: err = %v, want ErrFencedOut that acks", err)
	}
	if r := f.record(t, "m"); r.State != gate.StateDone || r.Fence != newcomerFence || newcomerFence != 2 {
		t.Fatalf("record = %s fence %d, want done by the newcomer (fence 2)", r.State, r.Fence)
	}
}

func TestWorkOutranLeaseWithoutReclaimCommits(t *testing.T) {
	f := newFixture(t, gate.Options{Lease: time.Minute})
	err := f.gate.Lock(context.Background(), "m", func(context.Context, gate.Claim) error {
		f.clock.Advance(5 * time.Minute)
		return nil
	})
	if err != nil {
		t.Fatalf("late complete: %v; a lapsed but un-reclaimed holder must commit", err)
	}
	if r := f.record(t, "m"); r.State != gate.StateDone {
		t.Fatalf("state = %s, want done", r.State)
	}
}

// flaky wraps a backend and fails the named calls.
type flaky struct {
	*memgate.Store
	failComplete bool
	refuseRenew  bool
	renews       atomic.Int32
}

var errStore = errors.New("store: connection reset")

func (b *flaky) Complete(ctx context.Context, c gate.Completion) (bool, error) {
	if b.failComplete {
		return false, errStore
	}
	return b.Store.Complete(ctx, c)
}

func (b *flaky) Renew(ctx context.Context, key string, fence int64, lease, ttl time.Duration) (bool, error) {
	b.renews.Add(1)
	if b.refuseRenew {
		return false, nil
	}
	return b.Store.Renew(ctx, key, fence, lease, ttl)
}

func TestStoreErrorOnCompleteIsNotRecordedAndMarkedUnknown(t *testing.T) {
	b := &flaky{Store: memgate.New(nil), failComplete: true}
	g, err := gate.New(b, &gate.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	err = g.Lock(context.Background(), "m", func(context.Context, gate.Claim) error { runs++; return nil })
	if !errors.Is(err, gate.ErrNotRecorded) || !errors.Is(err, errStore) || !gate.OutcomeOf(err).Ack() {
		t.Fatalf("err = %v, want ErrNotRecorded wrapping the store error, acked", err)
	}
	r, _, _ := b.Inspect(context.Background(), "m")
	if r.State != gate.StateUnknown {
		t.Fatalf("state = %s, want unknown", r.State)
	}
	if err := g.Lock(context.Background(), "m", func(context.Context, gate.Claim) error { runs++; return nil }); !errors.Is(err, gate.ErrUnknownOutcome) {
		t.Fatalf("redelivery of an unknown key: %v, want ErrUnknownOutcome", err)
	}
	if runs != 1 {
		t.Fatalf("runs = %d, want 1", runs)
	}
}

func TestTransientBodyFailureReleasesAndRetryRunsOnce(t *testing.T) {
	f := newFixture(t, gate.Options{})
	ctx := context.Background()
	boom := errors.New("supplier 503")
	runs := 0
	body := func(context.Context, gate.Claim) error {
		runs++
		if runs == 1 {
			return boom
		}
		return nil
	}
	err := f.gate.Lock(ctx, "m", body)
	var be *gate.BodyError
	if !errors.As(err, &be) || !errors.Is(err, boom) || gate.OutcomeOf(err) != gate.OutcomeBodyFailed || gate.OutcomeOf(err).Ack() {
		t.Fatalf("err = %v, want a nacked *BodyError wrapping boom", err)
	}
	if r := f.record(t, "m"); r.Fence != 2 || r.LeaseLive(f.clock.Now()) {
		t.Fatalf("after body error: fence %d live %v, want released (fence 2, lapsed)", r.Fence, r.LeaseLive(f.clock.Now()))
	}
	if err := f.gate.Lock(ctx, "m", body); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if err := f.gate.Lock(ctx, "m", body); !errors.Is(err, gate.ErrDuplicate) {
		t.Fatalf("after retry: %v, want duplicate", err)
	}
	if runs != 2 {
		t.Fatalf("runs = %d, want 2", runs)
	}
}

func TestPermanentBodyFailureIsRecordedAndAcked(t *testing.T) {
	f := newFixture(t, gate.Options{})
	ctx := context.Background()
	err := f.gate.Lock(ctx, "m", func(context.Context, gate.Claim) error { return gate.Permanent(errors.New("card declined")) })
	if gate.OutcomeOf(err) != gate.OutcomePermanent || !gate.OutcomeOf(err).Ack() {
		t.Fatalf("err = %v (%v), want permanent, acked", err, gate.OutcomeOf(err))
	}
	err = f.gate.Lock(ctx, "m", func(context.Context, gate.Claim) error { t.Error("ran after permanent failure"); return nil })
	var re *gate.RecordError
	if !errors.Is(err, gate.ErrFailed) || !errors.As(err, &re) || !strings.Contains(string(re.Record.Result), "card declined") {
		t.Fatalf("redelivery: %v, want ErrFailed with the stored failure", err)
	}
}

func TestTTLExpiryMakesKeyRunnableAgain(t *testing.T) {
	f := newFixture(t, gate.Options{TTL: time.Hour})
	ctx := context.Background()
	runs := 0
	body := func(context.Context, gate.Claim) error { runs++; return nil }
	_ = f.gate.Lock(ctx, "m", body)
	f.clock.Advance(59 * time.Minute)
	if err := f.gate.Lock(ctx, "m", body); !errors.Is(err, gate.ErrDuplicate) {
		t.Fatalf("inside ttl: %v, want duplicate", err)
	}
	f.clock.Advance(2 * time.Minute)
	if err := f.gate.Lock(ctx, "m", body); err != nil || runs != 2 {
		t.Fatalf("after ttl: err %v runs %d, want a second run", err, runs)
	}
}

func TestMutexRunsEveryMessageAndRefusesDoneKey(t *testing.T) {
	f := newFixture(t, gate.Options{})
	ctx := context.Background()
	runs := 0
	for range 3 {
		if err := f.gate.Mutex(ctx, "entity", func(context.Context, gate.Claim) error { runs++; return nil }); err != nil {
			t.Fatalf("Mutex: %v", err)
		}
	}
	if runs != 3 {
		t.Fatalf("runs = %d, want 3", runs)
	}
	_ = f.gate.Lock(ctx, "done-key", ok)
	if err := f.gate.Mutex(ctx, "done-key", ok); !errors.Is(err, gate.ErrInProgress) {
		t.Fatalf("Mutex on a done key: %v, want ErrInProgress", err)
	}
}

func TestMutexFencedOutWhenLeaseTakenMidBody(t *testing.T) {
	f := newFixture(t, gate.Options{Lease: time.Minute})
	ctx := context.Background()
	err := f.gate.Mutex(ctx, "entity", func(context.Context, gate.Claim) error {
		f.clock.Advance(2 * time.Minute)
		if err := f.gate.Mutex(ctx, "entity", ok); err != nil {
			t.Errorf("second holder: %v", err)
		}
		return nil
	})
	if !errors.Is(err, gate.ErrFencedOut) {
		t.Fatalf("err = %v, want ErrFencedOut", err)
	}
}
