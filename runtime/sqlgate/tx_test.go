package sqlgate_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// TestRunTxCommitsClaimWriteAndDone: a committed run leaves the done record and
// the effect; a redelivery is a duplicate that runs nothing.
func TestRunTxCommitsClaimWriteAndDone(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		s := newStore(t, openDB(t, d, nil), d)
		e := newEffects(t, s)
		var got gate.Claim
		err := s.RunTx(ctx, "order-1", &sqlgate.TxOptions{Namespace: "orders", TTL: time.Hour}, func(tx *sql.Tx, c gate.Claim) error {
			got = c
			return e.write(tx, c)
		})
		if err != nil {
			t.Fatalf("RunTx: %v", err)
		}
		if got.Key != "orders:order-1" || got.Fence != 1 || got.Owner == "" {
			t.Fatalf("claim = %+v, want key orders:order-1, fence 1, an owner", got)
		}
		expectRecord(t, s, e, "orders:order-1", gate.StateDone, 1, 1)
		rec, _, _ := s.Inspect(ctx, "orders:order-1")
		if d := rec.ExpiresAt.Sub(rec.DoneAt); d != time.Hour {
			t.Errorf("expires_at - done_at = %s, want the TTL, 1h", d)
		}

		err = s.RunTx(ctx, "order-1", &sqlgate.TxOptions{Namespace: "orders"}, func(tx *sql.Tx, c gate.Claim) error {
			t.Error("a duplicate ran the body")
			return e.write(tx, c)
		})
		re := recordErr(t, err, gate.ErrDuplicate)
		if re.Record.State != gate.StateDone || gate.OutcomeOf(err) != gate.OutcomeDuplicate {
			t.Errorf("duplicate: record %+v, outcome %v", re.Record, gate.OutcomeOf(err))
		}
		expectRecord(t, s, e, "orders:order-1", gate.StateDone, 1, 1)
	})
}

// TestRunTxPanicLeavesNothing: a panic between the user's write and the commit
// rolls back the claim and the write together; the next run starts afresh.
func TestRunTxPanicLeavesNothing(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		s := newStore(t, openDB(t, d, nil), d)
		e := newEffects(t, s)
		func() {
			defer func() {
				if p := recover(); p != "crash" {
					t.Fatalf("recovered %v, want the body's panic re-raised", p)
				}
			}()
			_ = s.RunTx(ctx, "k", nil, func(tx *sql.Tx, c gate.Claim) error {
				if err := e.write(tx, c); err != nil {
					t.Errorf("write: %v", err)
				}
				panic("crash")
			})
		}()
		expectRecord(t, s, e, "k", "", 0, 0)
		if err := s.RunTx(ctx, "k", nil, e.write); err != nil {
			t.Fatalf("run after the crash: %v", err)
		}
		expectRecord(t, s, e, "k", gate.StateDone, 1, 1)
	})
}

// TestInTxBodyError: fn's error is a *gate.BodyError; rolled back, nothing is
// left; committed anyway, the claim is lapsed and the next call reclaims it.
func TestInTxBodyError(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		s := newStore(t, openDB(t, d, nil), d)
		e := newEffects(t, s)
		boom := errors.New("boom")
		failing := func(tx *sql.Tx, c gate.Claim) error {
			if err := e.write(tx, c); err != nil {
				return err
			}
			return boom
		}
		err := s.RunTx(ctx, "k", nil, failing)
		var be *gate.BodyError
		if !errors.As(err, &be) || !errors.Is(err, boom) || be.Key != "k" || be.Fence != 1 || gate.OutcomeOf(err) != gate.OutcomeBodyFailed {
			t.Fatalf("RunTx = %v, want a *gate.BodyError wrapping boom at fence 1", err)
		}
		expectRecord(t, s, e, "k", "", 0, 0)

		tx, err := s.DB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.InTx(ctx, tx, "k", nil, failing); !errors.Is(err, boom) {
			t.Fatalf("InTx = %v, want boom", err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatalf("commit after the body error: %v", err)
		}
		expectRecord(t, s, e, "k", gate.StateClaimed, 1, 1)
		err = s.RunTx(ctx, "k", nil, func(tx *sql.Tx, c gate.Claim) error {
			if c.Fence != 2 {
				t.Errorf("reclaim fence = %d, want 2", c.Fence)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("reclaim of the committed lapsed claim: %v", err)
		}
	})
}

// TestInTxRefusedClaimWritesNothing: committing the caller's transaction after a
// duplicate, or after an in-progress answer, changes no record.
func TestInTxRefusedClaimWritesNothing(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		s := newStore(t, openDB(t, d, nil), d)
		e := newEffects(t, s)
		if err := s.RunTx(ctx, "done", nil, e.write); err != nil {
			t.Fatal(err)
		}
		held := claim(t, s, "held", time.Minute) // a gate.Lock holder elsewhere
		before := map[string]gate.Record{}
		for _, k := range []string{"done", "held"} {
			before[k], _, _ = s.Inspect(ctx, k)
		}
		tx, err := s.DB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		recordErr(t, s.InTx(ctx, tx, "done", nil, e.write), gate.ErrDuplicate)
		re := recordErr(t, s.InTx(ctx, tx, "held", nil, e.write), gate.ErrInProgress)
		if re.Record.Fence != held.Fence {
			t.Errorf("in-progress record fence %d, want the holder's %d", re.Record.Fence, held.Fence)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		for k, b := range before {
			a, _, _ := s.Inspect(ctx, k)
			if a.State != b.State || a.Fence != b.Fence || !a.LeaseExpiry.Equal(b.LeaseExpiry) || !a.ExpiresAt.Equal(b.ExpiresAt) {
				t.Errorf("record %q changed by a refused claim: %+v → %+v", k, b, a)
			}
		}
		expectRecord(t, s, e, "done", gate.StateDone, 1, 1)
		expectRecord(t, s, e, "held", gate.StateClaimed, 1, 0)
	})
}

// TestInTxMatchesGate: a key done in the transaction is a duplicate to a Gate
// with the same namespace, and a key a Gate did is a duplicate here; a payload
// change is key reuse on both paths.
func TestInTxMatchesGate(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		s := newStore(t, openDB(t, d, nil), d)
		e := newEffects(t, s)
		g, err := gate.New(s, &gate.Options{Namespace: "pay", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		opts := &sqlgate.TxOptions{Namespace: "pay", Payload: []byte("100 EUR")}
		if err := s.RunTx(ctx, "a", opts, e.write); err != nil {
			t.Fatal(err)
		}
		if _, _, err := gate.Do(ctx, g, gate.Call{Key: "a", Payload: []byte("100 EUR")}, func(context.Context, gate.Claim) (int, error) {
			t.Error("the gate ran a key done in a transaction")
			return 0, nil
		}); err != nil {
			t.Fatalf("gate.Do on a key done in a transaction: %v, want a replay", err)
		}
		if err := g.Lock(ctx, "b", func(context.Context, gate.Claim) error { return nil }); err != nil {
			t.Fatal(err)
		}
		recordErr(t, s.RunTx(ctx, "b", &sqlgate.TxOptions{Namespace: "pay"}, e.write), gate.ErrDuplicate)
		other := &sqlgate.TxOptions{Namespace: "pay", Payload: []byte("999 EUR")}
		if err := s.RunTx(ctx, "a", other, e.write); !errors.Is(err, gate.ErrKeyReuse) || gate.OutcomeOf(err) != gate.OutcomeRejected {
			t.Fatalf("payload change: %v, want ErrKeyReuse", err)
		}
		rec, _, _ := s.Inspect(ctx, "pay:a")
		want := sha256Of("100 EUR")
		if !bytes.Equal(rec.Fingerprint, want) {
			t.Errorf("fingerprint %x, want SHA-256 of the payload %x", rec.Fingerprint, want)
		}
	})
}

// TestTxArguments: bad options and arguments are refused before any statement.
func TestTxArguments(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, openDB(t, sqlgate.SQLite, nil), sqlgate.SQLite)
	body := func(*sql.Tx, gate.Claim) error { return nil }
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"negative TTL", s.RunTx(ctx, "k", &sqlgate.TxOptions{TTL: -time.Second}, body), "sqlgate.TxOptions.TTL"},
		{"empty key", s.RunTx(ctx, "", nil, body), gate.ErrInvalidKey.Error()},
		{"nil tx", s.InTx(ctx, nil, "k", nil, body), "tx and fn are required"},
		{"nil body", s.RunLocked(ctx, "k", nil, nil), "fn is required"},
		{"empty lock key", s.RunLocked(ctx, "", &sqlgate.TxOptions{Namespace: "ns"}, func(*sql.Tx) error { return nil }), gate.ErrInvalidKey.Error()},
		{"empty key with a namespace", s.RunTx(ctx, "", &sqlgate.TxOptions{Namespace: "ns"}, body), gate.ErrInvalidKey.Error()},
		{"nil RunTx body", s.RunTx(ctx, "k", nil, nil), "fn is required"},
	}
	for _, c := range cases {
		if c.err == nil || !bytes.Contains([]byte(c.err.Error()), []byte(c.want)) {
			t.Errorf("%s: err = %v, want one naming %q", c.name, c.err, c.want)
		}
	}
	if err := s.RunTx(ctx, "", nil, body); !errors.Is(err, gate.ErrInvalidKey) {
		t.Errorf("empty key: %v, want ErrInvalidKey", err)
	}
}

// TestRunTxRetriesAbortedTransactions: two runs that read and then update one
// row collide — on PostgreSQL at SERIALIZABLE the second update fails with a
// serialization failure, on MySQL/MariaDB the two share locks deadlock — and
// the database aborts one transaction. RunTx runs it again from the start, so
// both runs commit, and no update is lost.
func TestRunTxRetriesAbortedTransactions(t *testing.T) {
	for _, d := range []sqlgate.Dialect{sqlgate.Postgres, sqlgate.MySQL} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := newStore(t, openDB(t, d, nil), d)
			e := newEffects(t, s)
			if _, err := s.DB().Exec(`INSERT INTO ` + e.table + ` (id, fence) VALUES ('counter', 0)`); err != nil {
				t.Fatal(err)
			}
			read := `SELECT fence FROM ` + e.table + ` WHERE id = 'counter'`
			if d == sqlgate.MySQL {
				read += ` LOCK IN SHARE MODE`
			}
			var calls atomic.Int32
			var bothRead sync.WaitGroup
			bothRead.Add(2)
			var wg sync.WaitGroup
			for _, key := range []string{"a", "b"} {
				wg.Go(func() {
					first := true
					err := s.RunTx(ctx, key, &sqlgate.TxOptions{Isolation: sql.LevelSerializable}, func(tx *sql.Tx, c gate.Claim) error {
						calls.Add(1)
						var n int64
						if err := tx.QueryRow(read).Scan(&n); err != nil {
							return err
						}
						if first {
							first = false
							bothRead.Done()
							bothRead.Wait()
						}
						_, err := tx.Exec(`UPDATE `+e.table+` SET fence = `+ph(d, 1)+` WHERE id = 'counter'`, n+1)
						return err
					})
					if err != nil {
						t.Errorf("RunTx(%s): %v", key, err)
					}
				})
			}
			wg.Wait()
			var n int
			if err := s.DB().QueryRow(`SELECT fence FROM ` + e.table + ` WHERE id = 'counter'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 2 || calls.Load() < 3 {
				t.Fatalf("counter = %d after %d body calls; want 2, and at least one retried call", n, calls.Load())
			}
			for _, key := range []string{"a", "b"} {
				if st, fence := state(t, s, key); st != gate.StateDone || fence != 1 {
					t.Errorf("record %q = %s fence %d, want done at fence 1 (a retried attempt leaves no claim)", key, st, fence)
				}
			}
		})
	}
}
