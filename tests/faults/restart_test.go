package faults_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/dlock"
	"github.com/oncegate/oncegate/runtime/fencedsink"
	"github.com/oncegate/oncegate/runtime/gate"
)

// TestRedisRestartLosesLocks follows the recovery procedure of package dlock's
// doc after a Redis restart without persistence: the lock records are gone, so
// tokens restart at 1 and the fenced sink refuses them (safe, but stuck); after
// AdvanceFence to the sink's highest token the next holder writes again, and
// neither the holder from before the restart nor the one that acquired before
// the recovery can write through the sink.
func TestRedisRestartLosesLocks(t *testing.T) {
	srv := testenv.PrivateRedis(t)
	ctx := context.Background()
	store := redisStore(t, srv.Addr(), "restart:")
	locks, err := dlock.New(store, &dlock.Options{Lease: time.Second, RetryInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ft := newFencedTable(t)
	const key = "account-7"
	f := figures{Class: "Redis restart that loses data (dlock + fencedsink)", Backend: "redis", Messages: 1, Injected: 1}
	try := func(term *fencedsink.Term, want bool) {
		t.Helper()
		f.Tried++
		ok, err := ft.write(ctx, term)
		if ok != want || (!ok && !errors.Is(err, fencedsink.ErrStaleToken)) {
			t.Fatalf("write with token %d: ok=%v err=%v; want ok=%v (refusals must match ErrStaleToken)", term.Token(), ok, err, want)
		}
		if ok {
			f.Processed++
		}
	}

	// Before the restart: three holders in turn, the last one still holding.
	var (
		zombie     *dlock.Lock
		zombieTerm *fencedsink.Term
	)
	for i := range 3 {
		l, err := locks.Acquire(ctx, key, "")
		if err != nil {
			t.Fatal(err)
		}
		zombie, zombieTerm = l, ft.sink.Term(key, l.Token())
		try(zombieTerm, true)
		if i < 2 {
			if ok, err := l.Release(ctx); !ok || err != nil {
				t.Fatalf("Release: %v %v", ok, err)
			}
		}
	}
	highest, err := ft.sink.Fence(ctx, ft.db, key)
	if err != nil || highest != zombie.Token() || highest < 5 {
		t.Fatalf("sink fence %d (%v), want the last holder's token %d ≥ 5", highest, err, zombie.Token())
	}

	srv.Restart(t) // no persistence: every lock record is gone

	// Without recovery the key restarts at token 1: the sink refuses it.
	early, err := locks.AcquireWait(ctx, key, "early")
	if err != nil {
		t.Fatal(err)
	}
	if early.Token() != 1 {
		t.Fatalf("token after the restart = %d, want 1 (the record was lost)", early.Token())
	}
	try(ft.sink.Term(key, early.Token()), false)

	// Recovery: advance the fence to the highest token the sink accepted.
	if got, err := locks.AdvanceFence(ctx, key, highest); err != nil || got != highest {
		t.Fatalf("AdvanceFence(%d) = %d, %v", highest, got, err)
	}
	if err := early.Renew(ctx); !errors.Is(err, gate.ErrLeaseLost) {
		t.Fatalf("renewal of the holder that acquired before the recovery: %v, want ErrLeaseLost", err)
	}
	next, err := locks.AcquireWait(ctx, key, "next") // once early's lease lapses
	if err != nil {
		t.Fatal(err)
	}
	if next.Token() != highest+1 {
		t.Fatalf("token after the recovery = %d, want %d", next.Token(), highest+1)
	}
	try(ft.sink.Term(key, next.Token()), true)

	// The holder from before the restart wakes up and writes again: refused.
	try(zombieTerm, false)
	try(ft.sink.Term(key, zombie.Token()), false)
	if err := zombie.Renew(ctx); !errors.Is(err, gate.ErrLeaseLost) {
		t.Fatalf("renewal of the holder from before the restart: %v, want ErrLeaseLost", err)
	}
	if ok, err := zombie.Release(ctx); ok || err != nil {
		t.Fatalf("release by the holder from before the restart = %v, %v; want false", ok, err)
	}

	// One effect per term: tokens 1, 3 and 5 before the restart (the token 1
	// handed out again after it wrote nothing), and the recovered holder's.
	for tok, want := range map[int64]int{1: 1, 3: 1, zombie.Token(): 1, next.Token(): 1} {
		if got := ft.effectsBy(t, key, tok); got != want {
			f.Duplicates += max(0, got-want)
			t.Errorf("effects under token %d: %d, want %d", tok, got, want)
		}
	}
	f.Note = "stale writes refused: 3 (token 1 handed out again before the recovery; the pre-restart holder's term, and a fresh term with its token, after the takeover)"
	report(t, f)
}

// TestRedisRestartGateRecovery is the same procedure for the gateway's records:
// a Mutex body from before the restart is still running; after the restart and
// AdvanceFence on the gate's key, a new delivery runs with a token above every
// earlier one, and the old body's write is refused and its release fenced out.
func TestRedisRestartGateRecovery(t *testing.T) {
	srv := testenv.PrivateRedis(t)
	ctx := context.Background()
	store := redisStore(t, srv.Addr(), "restart:")
	g, err := gate.New(store, &gate.Options{Namespace: "orders", Lease: time.Minute, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ft := newFencedTable(t)
	key := g.Key("account-9")
	f := figures{Class: "Redis restart that loses data (gate Mutex + fencedsink)", Backend: "redis", Messages: 1, Injected: 1}
	write := func(ctx context.Context, c gate.Claim) error {
		f.Tried++
		ok, err := ft.write(ctx, ft.sink.Term(c.Key, c.Fence))
		if ok {
			f.Processed++
		}
		return err
	}
	for range 2 { // two runs before the restart: fences 1 and 3
		if err := g.Mutex(ctx, "account-9", write); err != nil {
			t.Fatal(err)
		}
	}
	started, resume := make(chan gate.Claim), make(chan struct{})
	oldDone := make(chan error, 1)
	go func() {
		oldDone <- g.Mutex(ctx, "account-9", func(ctx context.Context, c gate.Claim) error {
			if err := write(ctx, c); err != nil {
				return err
			}
			started <- c
			<-resume
			return write(ctx, c) // the holder from before the restart writes again
		})
	}()
	old := <-started

	srv.Restart(t)

	if err := g.Mutex(ctx, "account-9", write); !errors.Is(err, fencedsink.ErrStaleToken) || gate.OutcomeOf(err) != gate.OutcomeBodyFailed {
		t.Fatalf("run after the restart, before the recovery: %v; want a body error matching ErrStaleToken (nack, nothing written)", err)
	}
	highest, err := ft.sink.Fence(ctx, ft.db, key)
	if err != nil || highest != old.Fence {
		t.Fatalf("sink fence %d (%v), want %d", highest, err, old.Fence)
	}
	if _, err := store.AdvanceFence(ctx, key, highest, time.Hour); err != nil {
		t.Fatal(err)
	}
	var fresh int64
	if err := g.Mutex(ctx, "account-9", func(ctx context.Context, c gate.Claim) error {
		fresh = c.Fence
		return write(ctx, c)
	}); err != nil {
		t.Fatalf("run after the recovery: %v", err)
	}
	if fresh <= old.Fence {
		t.Fatalf("fence after the recovery %d, want above %d", fresh, old.Fence)
	}
	close(resume)
	if err := <-oldDone; !errors.Is(err, fencedsink.ErrStaleToken) {
		t.Fatalf("the old body's second write: %v, want ErrStaleToken", err)
	}
	if got := ft.effectsBy(t, key, old.Fence); got != 1 {
		f.Duplicates += max(0, got-1)
		t.Errorf("effects of the old holder: %d, want 1 (its write before the restart)", got)
	}
	f.Note = "stale writes refused: 2 (before the recovery; the pre-restart body after it)"
	report(t, f)
}
