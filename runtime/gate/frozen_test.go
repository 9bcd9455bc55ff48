package gate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gatetest"
	"github.com/oncegate/oncegate/runtime/memgate"
)

// frozen wraps a memgate store like a network store that freezes: a frozen
// call hangs until its context ends (a request on a connection that stopped
// answering), and every call refuses a context that already ended, as a real
// client does. Counters say how many of the next calls freeze.
type frozen struct {
	*memgate.Store
	claims, completes, marks atomic.Int32 // calls still to freeze
	loseComplete             atomic.Bool  // apply the next complete, then lose its answer
	loseMark                 atomic.Bool  // apply the next mark, then lose its answer
	markBudget               atomic.Int64 // time left on the first mark's context, ns
	failInspect              atomic.Bool  // every Inspect fails (a pool exhausted, the store down)
}

func (b *frozen) Inspect(ctx context.Context, key string) (gate.Record, bool, error) {
	if b.failInspect.Load() {
		return gate.Record{}, false, errors.New("inspect: connection pool exhausted")
	}
	return b.Store.Inspect(ctx, key)
}

func freeze(ctx context.Context, n *atomic.Int32, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if n.Add(-1) >= 0 {
		<-ctx.Done()
		return fmt.Errorf("%s: store froze: %w", op, ctx.Err())
	}
	return nil
}

func (b *frozen) Claim(ctx context.Context, req gate.ClaimRequest) (gate.ClaimResult, error) {
	if err := freeze(ctx, &b.claims, "claim"); err != nil {
		return gate.ClaimResult{}, err
	}
	return b.Store.Claim(ctx, req)
}

func (b *frozen) Complete(ctx context.Context, c gate.Completion) (bool, error) {
	if err := freeze(ctx, &b.completes, "complete"); err != nil {
		return false, err
	}
	ok, err := b.Store.Complete(ctx, c)
	if err == nil && b.loseComplete.CompareAndSwap(true, false) {
		return false, errors.New("complete: connection reset after the commit")
	}
	return ok, err
}

func (b *frozen) MarkUnknown(ctx context.Context, key string, fence int64) (bool, error) {
	if dl, ok := ctx.Deadline(); ok {
		b.markBudget.CompareAndSwap(0, int64(time.Until(dl)))
	}
	if err := freeze(ctx, &b.marks, "mark unknown"); err != nil {
		return false, err
	}
	ok, err := b.Store.MarkUnknown(ctx, key, fence)
	if err == nil && b.loseMark.CompareAndSwap(true, false) {
		return false, errors.New("mark unknown: connection reset after the commit")
	}
	return ok, err
}

const frozenStoreTimeout = 400 * time.Millisecond

// frozenFixture is a gate over a freezing store whose clock the test moves,
// so a redelivery can come after the lease lapsed.
func frozenFixture(t *testing.T) (*frozen, *gate.Gate, *gatetest.Clock) {
	t.Helper()
	c := gatetest.NewClock(gatetest.Epoch)
	b := &frozen{Store: memgate.New(&memgate.Options{Now: c.Now})}
	g, err := gate.New(b, &gate.Options{Logger: quiet, Lease: time.Minute, StoreTimeout: frozenStoreTimeout})
	if err != nil {
		t.Fatal(err)
	}
	return b, g, c
}

// TestFrozenStoreAfterTheBodyNeverRepeatsIt freezes the store right after
// the body ran, for shorter and longer than the complete's phase, and then
// redelivers the message after the lease lapsed: the body never runs twice.
// Before the complete was retried and the unknown mark had a phase of its
// own, a complete that hung for the whole store timeout left the mark an
// expired context, the record stayed claimed, and the redelivery ran the
// body again at fence 2.
func TestFrozenStoreAfterTheBodyNeverRepeatsIt(t *testing.T) {
	tests := []struct {
		name       string
		completes  int32 // complete attempts that freeze
		marks      int32 // unknown-mark attempts that freeze
		loseMark   bool
		wantErr    error // nil: recorded done
		wantState  gate.State
		redelivery error
	}{
		{"store back within the complete's phase", 1, 0, false, nil, gate.StateDone, gate.ErrDuplicate},
		{"complete frozen for its whole phase, unknown mark lands", 1 << 20, 0, false, gate.ErrNotRecorded, gate.StateUnknown, gate.ErrUnknownOutcome},
		{"mark's first attempt frozen too", 1 << 20, 1, false, gate.ErrNotRecorded, gate.StateUnknown, gate.ErrUnknownOutcome},
		{"mark's answer lost after it committed", 1 << 20, 0, true, gate.ErrNotRecorded, gate.StateUnknown, gate.ErrUnknownOutcome},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, g, clock := frozenFixture(t)
			ctx := context.Background()
			runs := 0
			body := func(context.Context, gate.Claim) error {
				runs++
				b.completes.Store(tt.completes) // the store freezes once the body ran
				b.marks.Store(tt.marks)
				b.loseMark.Store(tt.loseMark)
				return nil
			}
			err := g.Lock(ctx, "m", body)
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Lock = %v, want %v", err, tt.wantErr)
			}
			if !gate.OutcomeOf(err).Ack() {
				t.Fatalf("outcome %v is not acked", gate.OutcomeOf(err))
			}
			b.completes.Store(0)
			b.marks.Store(0)
			if r, _, _ := b.Inspect(ctx, "m"); r.State != tt.wantState {
				t.Fatalf("state = %s, want %s", r.State, tt.wantState)
			}
			if tt.completes > 1 {
				// The mark got a phase of its own, not what the complete left.
				if left := time.Duration(b.markBudget.Load()); left < frozenStoreTimeout/2-50*time.Millisecond {
					t.Errorf("the unknown mark started with %s left, want about %s (its own phase)", left, frozenStoreTimeout/2)
				}
			}
			clock.Advance(2 * time.Minute) // the lease lapsed; Pub/Sub redelivers
			if err := g.Lock(ctx, "m", body); !errors.Is(err, tt.redelivery) {
				t.Fatalf("redelivery: %v, want %v", err, tt.redelivery)
			}
			if runs != 1 {
				t.Fatalf("the body ran %d times, want 1", runs)
			}
		})
	}
}

// TestRetriedCompleteWhoseFirstAttemptCommittedSucceeds loses the answer of a
// complete that committed: the retry finds the record done at the claim's own
// fence and reports success, not a fenced-out holder.
func TestRetriedCompleteWhoseFirstAttemptCommittedSucceeds(t *testing.T) {
	b, g, _ := frozenFixture(t)
	ctx := context.Background()
	b.loseComplete.Store(true)
	if err := g.Lock(ctx, "m", ok); err != nil {
		t.Fatalf("Lock = %v (%v), want nil: the first attempt committed", err, gate.OutcomeOf(err))
	}
	if r, _, _ := b.Inspect(ctx, "m"); r.State != gate.StateDone || r.Fence != 1 {
		t.Fatalf("record %+v, want done at fence 1", r)
	}
}

// TestLostCompleteAnswerWithUnreadableRecordIsNotFencedOut loses the answer
// of a complete that committed and fails every read of the record: the gate
// cannot tell its own commit from another holder's claim, so it reports the
// outcome not recorded (after trying the unknown mark), never fenced out with
// its alert to look for a double effect.
func TestLostCompleteAnswerWithUnreadableRecordIsNotFencedOut(t *testing.T) {
	b, _, _ := frozenFixture(t)
	var logs bytes.Buffer
	g, err := gate.New(b, &gate.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Lease: time.Minute, StoreTimeout: frozenStoreTimeout})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b.loseComplete.Store(true)
	b.failInspect.Store(true)
	err = g.Lock(ctx, "m", ok)
	if errors.Is(err, gate.ErrFencedOut) || !errors.Is(err, gate.ErrNotRecorded) {
		t.Fatalf("Lock = %v (%v), want ErrNotRecorded: the record could not be read", err, gate.OutcomeOf(err))
	}
	if got := gate.OutcomeOf(err); got != gate.OutcomeNotRecorded {
		t.Fatalf("outcome %v, want %v", got, gate.OutcomeNotRecorded)
	}
	if b.markBudget.Load() == 0 {
		t.Error("the unknown mark was not attempted")
	}
	if strings.Contains(logs.String(), "double effect") || strings.Contains(logs.String(), "another holder") {
		t.Errorf("logs blame another holder:\n%s", logs.String())
	}
	if r, _, _ := b.Store.Inspect(ctx, "m"); r.State != gate.StateDone || r.Fence != 1 {
		t.Fatalf("record %+v, want done at fence 1 (the first attempt committed)", r)
	}
}

// TestFencedOutCompleteIsStillReported checks the retry does not hide a real
// fencing: another holder took the key while the body ran.
func TestFencedOutCompleteIsStillReported(t *testing.T) {
	b, g, clock := frozenFixture(t)
	ctx := context.Background()
	err := g.Lock(ctx, "m", func(context.Context, gate.Claim) error {
		clock.Advance(2 * time.Minute)
		if _, err := b.Store.Claim(ctx, gate.ClaimRequest{Key: "m", Token: "other", Lease: time.Minute, TTL: time.Hour}); err != nil {
			t.Fatal(err)
		}
		b.loseComplete.Store(true) // a lost answer first, then the refusal
		return nil
	})
	if !errors.Is(err, gate.ErrFencedOut) {
		t.Fatalf("Lock = %v, want ErrFencedOut", err)
	}
}

// TestFrozenClaimIsBounded checks the claim has its phase too: a store that
// never answers fails the call closed within StoreTimeout, even when the
// caller's context has no deadline.
func TestFrozenClaimIsBounded(t *testing.T) {
	b, g, _ := frozenFixture(t)
	b.claims.Store(1)
	done := make(chan error, 1)
	go func() { done <- g.Lock(context.Background(), "m", ok) }()
	select {
	case err := <-done:
		if !errors.Is(err, gate.ErrStoreUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Lock = %v, want ErrStoreUnavailable after the claim's phase", err)
		}
	case <-time.After(30 * frozenStoreTimeout):
		t.Fatal("a frozen claim was not bounded by the store timeout")
	}
}
