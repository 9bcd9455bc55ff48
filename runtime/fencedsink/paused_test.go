package fencedsink_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/dlock"
	"github.com/oncegate/oncegate/runtime/fencedsink"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gatetest"
	"github.com/oncegate/oncegate/runtime/memgate"
)

// accounts is a user's table guarded through its own fence column.
type accounts struct {
	db    *sql.DB
	table string
	sink  *fencedsink.Sink
}

func newAccounts(t *testing.T) *accounts {
	t.Helper()
	db := openPostgres(t)
	table := newTable(t, db, "id TEXT PRIMARY KEY, balance BIGINT NOT NULL DEFAULT 0, fence BIGINT NOT NULL DEFAULT 0")
	sink, err := fencedsink.New(table, &fencedsink.Options{KeyColumn: "id"})
	if err != nil {
		t.Fatal(err)
	}
	return &accounts{db: db, table: table, sink: sink}
}

// set writes balance under term.
func (a *accounts) set(term *fencedsink.Term, balance int64) error {
	return term.Write(context.Background(), a.db, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE "+a.table+" SET balance = $1 WHERE id = $2", balance, term.Key())
		return err
	})
}

func (a *accounts) balance(t *testing.T, id string) int64 {
	t.Helper()
	var b int64
	if err := a.db.QueryRowContext(context.Background(), "SELECT balance FROM "+a.table+" WHERE id = $1", id).Scan(&b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPausedHolderCannotWriteAfterANewerToken is the zombie scenario: a holder
// pauses past its lease, another takes the lock and writes, and the paused one
// wakes up and writes — whether or not it wrote before pausing.
func TestPausedHolderCannotWriteAfterANewerToken(t *testing.T) {
	for _, wroteBefore := range []bool{true, false} {
		t.Run(map[bool]string{true: "wrote before pausing", false: "first write after pausing"}[wroteBefore], func(t *testing.T) {
			ctx := context.Background()
			acct := newAccounts(t)
			clk := gatetest.NewClock(gatetest.Epoch)
			locks, err := dlock.New(memgate.New(&memgate.Options{Now: clk.Now}), &dlock.Options{Lease: time.Minute, Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			a, err := locks.Acquire(ctx, "acct-1", "worker-a")
			if err != nil {
				t.Fatal(err)
			}
			termA := acct.sink.Term("acct-1", a.Token())
			if wroteBefore {
				if err := acct.set(termA, 100); err != nil {
					t.Fatalf("holder a: %v", err)
				}
			}

			clk.Advance(90 * time.Second) // a is paused past its lease

			b, err := locks.Acquire(ctx, "acct-1", "worker-b")
			if err != nil {
				t.Fatalf("takeover: %v", err)
			}
			if err := acct.set(acct.sink.Term("acct-1", b.Token()), 200); err != nil {
				t.Fatalf("holder b: %v", err)
			}

			// a wakes up and carries on.
			if err := acct.set(termA, 999); !errors.Is(err, fencedsink.ErrStaleToken) {
				t.Fatalf("paused holder's write: err = %v, want ErrStaleToken", err)
			}
			if err := a.Renew(ctx); !errors.Is(err, gate.ErrLeaseLost) {
				t.Fatalf("paused holder's renewal: err = %v, want ErrLeaseLost", err)
			}
			if got := acct.balance(t, "acct-1"); got != 200 {
				t.Fatalf("balance = %d, want 200 (the newer holder's write)", got)
			}
		})
	}
}

// TestRecoveryAfterTheLockStoreLostData follows the documented procedure: the
// lock store restarts empty, so tokens restart below what the sink accepted; the
// sink refuses them until the lock's fence is advanced to the sink's fence.
func TestRecoveryAfterTheLockStoreLostData(t *testing.T) {
	ctx := context.Background()
	acct := newAccounts(t)
	exec(t, acct.db, "INSERT INTO "+acct.table+" (id) VALUES ('acct-1')")
	locks, _ := dlock.New(memgate.New(nil), nil)
	for range 3 {
		if err := locks.Do(ctx, "acct-1", func(_ context.Context, token int64) error {
			return acct.set(acct.sink.Term("acct-1", token), token*10)
		}); err != nil {
			t.Fatal(err)
		}
	}

	locks, _ = dlock.New(memgate.New(nil), nil) // the store lost its records
	err := locks.Do(ctx, "acct-1", func(_ context.Context, token int64) error {
		return acct.set(acct.sink.Term("acct-1", token), -1)
	})
	if !errors.Is(err, fencedsink.ErrStaleToken) {
		t.Fatalf("write with a token from the emptied store: err = %v, want ErrStaleToken", err)
	}

	highest, err := acct.sink.Fence(ctx, acct.db, "acct-1")
	if err != nil || highest != 5 {
		t.Fatalf("sink fence = %d, %v; want 5", highest, err)
	}
	if _, err := locks.AdvanceFence(ctx, "acct-1", highest); err != nil {
		t.Fatal(err)
	}
	if err := locks.Do(ctx, "acct-1", func(_ context.Context, token int64) error {
		if token <= highest {
			t.Errorf("token %d after the advance, want above %d", token, highest)
		}
		return acct.set(acct.sink.Term("acct-1", token), 70)
	}); err != nil {
		t.Fatalf("write after recovery: %v", err)
	}
	if got := acct.balance(t, "acct-1"); got != 70 {
		t.Fatalf("balance = %d, want 70", got)
	}
}
