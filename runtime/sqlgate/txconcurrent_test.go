package sqlgate_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// stillWaiting is how long a second transaction must stay blocked for the test
// to call it waiting.
const stillWaiting = 300 * time.Millisecond

// holdTx starts RunTx on key whose body writes the effect, reports it started,
// and returns once release is closed, with fail's error. It returns the channel
// RunTx's answer arrives on.
func holdTx(t *testing.T, s *sqlgate.Store, e *effects, key string, opts *sqlgate.TxOptions, release <-chan struct{}, fail error) <-chan error {
	t.Helper()
	started, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- s.RunTx(context.Background(), key, opts, func(tx *sql.Tx, c gate.Claim) error {
			if err := e.write(tx, c); err != nil {
				return err
			}
			close(started)
			<-release
			return fail
		})
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("first transaction ended early: %v", err)
	}
	return done
}

// TestSecondTxWaitsForFirst: by default a second transaction on a key another
// one is working on waits for it: a duplicate once the first commits, the
// winner once it rolls back.
func TestSecondTxWaitsForFirst(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		s := newStore(t, openDB(t, d, nil), d)
		e := newEffects(t, s)
		for _, firstFails := range []bool{false, true} {
			key := fmt.Sprint("first-fails-", firstFails)
			var fail error
			if firstFails {
				fail = errors.New("first rolls back")
			}
			release := make(chan struct{})
			first := holdTx(t, s, e, key, nil, release, fail)
			ran := make(chan int64, 1)
			second := make(chan error, 1)
			go func() {
				second <- s.RunTx(context.Background(), key, nil, func(tx *sql.Tx, c gate.Claim) error {
					ran <- c.Fence
					return e.write(tx, c)
				})
			}()
			select {
			case err := <-second:
				close(release)
				t.Fatalf("second transaction answered %v while the first was open; want it to wait", err)
			case <-time.After(stillWaiting):
			}
			close(release)
			if err := <-first; !errors.Is(err, fail) || (fail == nil) != (err == nil) {
				t.Fatalf("first = %v, want %v", err, fail)
			}
			err := <-second
			if firstFails {
				if err != nil || len(ran) != 1 || <-ran != 1 {
					t.Fatalf("second after a rollback = %v (ran %d), want it to run at fence 1", err, len(ran))
				}
				expectRecord(t, s, e, key, gate.StateDone, 1, 1)
				continue
			}
			recordErr(t, err, gate.ErrDuplicate)
			if len(ran) != 0 {
				t.Fatal("the second transaction ran the body after the first committed")
			}
			expectRecord(t, s, e, key, gate.StateDone, 1, 1)
		}
	})
}

// TestSecondTxNoWait: with NoWait, a second transaction reports in-progress at
// once while the first is open (whether the first waits or not), its own
// transaction still usable; after the commit it is a duplicate. On SQLite,
// which has one writer at a time, NoWait has no effect: it waits.
func TestSecondTxNoWait(t *testing.T) {
	noWait := &sqlgate.TxOptions{NoWait: true}
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		s := newStore(t, openDB(t, d, nil), d)
		e := newEffects(t, s)
		for _, firstOpts := range []*sqlgate.TxOptions{nil, noWait} {
			key := fmt.Sprint("first-nowait-", firstOpts != nil)
			release := make(chan struct{})
			first := holdTx(t, s, e, key, firstOpts, release, nil)
			if d == sqlgate.SQLite {
				second := make(chan error, 1)
				go func() { second <- s.RunTx(ctx, key, noWait, e.write) }()
				select {
				case err := <-second:
					t.Fatalf("SQLite NoWait answered %v while the first held the write lock; want it to wait", err)
				case <-time.After(stillWaiting):
				}
				close(release)
				if err := <-first; err != nil {
					t.Fatal(err)
				}
				recordErr(t, <-second, gate.ErrDuplicate)
				continue
			}
			tx, err := s.DB().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			began := time.Now()
			err = s.InTx(ctx, tx, key, noWait, func(*sql.Tx, gate.Claim) error {
				t.Error("NoWait ran the body while another transaction held the key")
				return nil
			})
			// MariaDB waits none; MySQL's smallest lock wait is 1 s.
			if !errors.Is(err, gate.ErrInProgress) || gate.OutcomeOf(err) != gate.OutcomeInProgress || time.Since(began) > 1500*time.Millisecond {
				t.Fatalf("NoWait = %v after %s, want ErrInProgress at once", err, time.Since(began))
			}
			var one int
			if err := tx.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
				t.Fatalf("the transaction is unusable after a NoWait refusal: %v", err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatalf("commit after a NoWait refusal: %v", err)
			}
			close(release)
			if err := <-first; err != nil {
				t.Fatal(err)
			}
			recordErr(t, s.RunTx(ctx, key, noWait, e.write), gate.ErrDuplicate)
			expectRecord(t, s, e, key, gate.StateDone, 1, 1)
		}
	})
}

// TestConcurrentTxOneEffect races eight transactions on one key, fresh, a
// lapsed gate claim, and an expired done record, waiting and not, and with a
// first winner that rolls back while the others queue behind it: exactly one
// body commits; every other call is a duplicate (or in-progress, with NoWait);
// no deadlock, serialization or busy error escapes, except the Retryable
// deadlocks InnoDB deals waiters on a fresh key whose inserter rolled back,
// which RunTx absorbs.
func TestConcurrentTxOneEffect(t *testing.T) {
	const racers = 8
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		s := newStore(t, openDB(t, d, nil), d)
		e := newEffects(t, s)
		prepare := map[string]func(key string) int64{
			"fresh": func(string) int64 { return 1 },
			"lapsed": func(key string) int64 {
				claim(t, s, key, 0)
				return 2
			},
			"expired": func(key string) int64 {
				if err := s.RunTx(ctx, key, &sqlgate.TxOptions{TTL: time.Millisecond}, func(*sql.Tx, gate.Claim) error { return nil }); err != nil {
					t.Fatal(err)
				}
				time.Sleep(5 * time.Millisecond) // the database's clock passes expires_at
				return 2
			},
		}
		for name, prep := range prepare {
			for _, v := range []struct{ noWait, firstFails, retry bool }{
				{false, false, false}, {true, false, false}, {false, true, false}, {false, true, true},
			} {
				noWait := v.noWait
				key := fmt.Sprint(name, "-nowait-", noWait, "-firstfails-", v.firstFails, "-retry-", v.retry)
				fence := prep(key)
				var mu sync.Mutex
				var ran, dup, busy, failed, aborted int
				failFirst := v.firstFails
				var wg sync.WaitGroup
				start := make(chan struct{})
				for range racers {
					wg.Go(func() {
						<-start
						// InTx in a transaction of its own, not RunTx, so no retry hides
						// a deadlock; except when the first winner rolls back, where
						// InnoDB may abort waiters on a fresh key (see runTx).
						run := inOwnTx
						if v.retry {
							run = runTx
						}
						err := run(ctx, s, key, &sqlgate.TxOptions{NoWait: noWait}, func(tx *sql.Tx, c gate.Claim) error {
							if c.Fence != fence {
								t.Errorf("%s: fence %d, want %d", key, c.Fence, fence)
							}
							if err := e.write(tx, c); err != nil {
								return err
							}
							mu.Lock()
							defer mu.Unlock()
							if failFirst {
								failFirst = false
								time.Sleep(50 * time.Millisecond) // let the others queue behind it
								return errFirst
							}
							return nil
						})
						mu.Lock()
						defer mu.Unlock()
						switch {
						case err == nil:
							ran++
						case errors.Is(err, errFirst):
							failed++
						case d == sqlgate.MySQL && v.firstFails && !v.retry && name == "fresh" && sqlgate.Retryable(err):
							aborted++
						case errors.Is(err, gate.ErrDuplicate):
							dup++
						case noWait && errors.Is(err, gate.ErrInProgress):
							busy++
						default:
							t.Errorf("%s: %v", key, err)
						}
					})
				}
				close(start)
				wg.Wait()
				if ran != 1 || dup+busy+failed+aborted != racers-1 || failed != btoi(v.firstFails) {
					t.Errorf("%s: ran %d, duplicate %d, in progress %d, rolled back %d, aborted %d; want exactly one run",
						key, ran, dup, busy, failed, aborted)
				}
				expectRecord(t, s, e, key, gate.StateDone, fence, 1)
			}
		}
	})
}

var errFirst = errors.New("the first winner rolls back")

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runTx is RunTx: InTx in transactions it begins, commits, and runs again
// when the database aborted one for a deadlock. On MySQL/MariaDB, when the
// transaction that inserted a fresh key's record rolls back while two or more
// others wait on it, InnoDB aborts some of the waiters with a deadlock (a
// property of its duplicate-key checks); RunTx absorbs it.
func runTx(ctx context.Context, s *sqlgate.Store, key string, opts *sqlgate.TxOptions, fn sqlgate.TxBody) error {
	return s.RunTx(ctx, key, opts, fn)
}

// inOwnTx runs InTx in a transaction it begins and commits, once.
func inOwnTx(ctx context.Context, s *sqlgate.Store, key string, opts *sqlgate.TxOptions, fn sqlgate.TxBody) error {
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := s.InTx(ctx, tx, key, opts, fn); err != nil {
		return err
	}
	return tx.Commit()
}

// TestWaitEndsWithContext: a second transaction waiting for the key (InTx) or
// the lock (LockTx) stops when its context ends, with the context's error.
func TestWaitEndsWithContext(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		s := newStore(t, openDB(t, d, nil), d)
		e := newEffects(t, s)
		release := make(chan struct{})
		first := holdTx(t, s, e, "k", nil, release, nil)
		holder := begin(t, s)
		if d != sqlgate.SQLite { // on SQLite the first transaction holds the only write lock
			if err := s.LockTx(context.Background(), holder, "lock"); err != nil {
				t.Fatal(err)
			}
		}
		waits := map[string]func(ctx context.Context, tx *sql.Tx) error{
			"InTx": func(ctx context.Context, tx *sql.Tx) error {
				return s.InTx(ctx, tx, "k", nil, func(*sql.Tx, gate.Claim) error {
					t.Error("ran while another transaction held the key")
					return nil
				})
			},
			"LockTx": func(ctx context.Context, tx *sql.Tx) error { return s.LockTx(ctx, tx, "lock") },
		}
		for name, wait := range waits {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			tx, err := s.DB().BeginTx(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			err = wait(ctx, tx)
			cancel()
			_ = tx.Rollback()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s past its context's deadline: %v, want context.DeadlineExceeded", name, err)
			}
		}
		close(release)
		if err := <-first; err != nil {
			t.Fatal(err)
		}
	})
}

// TestRepeatableReadWaiter: on PostgreSQL at REPEATABLE READ, a transaction that
// waited for another one on the key took its snapshot before that one
// committed, so its claim fails with a serialization error (Retryable), and
// RunTx, which runs the transaction again, answers a duplicate.
func TestRepeatableReadWaiter(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, openDB(t, sqlgate.Postgres, nil), sqlgate.Postgres)
	e := newEffects(t, s)
	release := make(chan struct{})
	first := holdTx(t, s, e, "k", nil, release, nil)
	direct, viaRunTx := make(chan error, 1), make(chan error, 1)
	body := func(*sql.Tx, gate.Claim) error {
		t.Error("a waiter ran the body after the first committed")
		return nil
	}
	go func() {
		tx, err := s.DB().BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
		if err != nil {
			direct <- err
			return
		}
		defer func() { _ = tx.Rollback() }()
		direct <- s.InTx(ctx, tx, "k", nil, body)
	}()
	go func() {
		viaRunTx <- s.RunTx(ctx, "k", &sqlgate.TxOptions{Isolation: sql.LevelRepeatableRead}, body)
	}()
	select {
	case err := <-direct:
		t.Fatalf("a REPEATABLE READ waiter answered %v while the first was open", err)
	case <-time.After(stillWaiting):
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-direct; !sqlgate.Retryable(err) || errors.Is(err, gate.ErrDuplicate) {
		t.Errorf("InTx at REPEATABLE READ after the wait = %v, want a Retryable serialization error", err)
	}
	recordErr(t, <-viaRunTx, gate.ErrDuplicate)
}

// TestLockTimeoutIsInProgress: a wait that outlasts the database's own lock
// timeout (PostgreSQL lock_timeout, MySQL innodb_lock_wait_timeout, SQLite's
// busy timeout) answers gate.ErrInProgress, for a claim and for a lock.
func TestLockTimeoutIsInProgress(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		s := newStore(t, openDB(t, d, nil), d)
		e := newEffects(t, s)
		var short *sql.DB
		switch d {
		case sqlgate.Postgres:
			short = openDB(t, d, map[string]string{"lock_timeout": "200"})
		case sqlgate.MySQL:
			short = openDB(t, d, map[string]string{"innodb_lock_wait_timeout": "1"})
		default:
			var file string
			if err := s.DB().QueryRow("SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file); err != nil {
				t.Fatal(err)
			}
			var err error
			if short, err = sql.Open("sqlite", file+"?_busy_timeout=200&_journal_mode=WAL"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = short.Close() })
		}
		s2, err := sqlgate.New(short, d, &sqlgate.Options{Table: s.Table()})
		if err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		first := holdTx(t, s, e, "k", nil, release, nil)
		if d != sqlgate.SQLite {
			if err := s.LockTx(ctx, begin(t, s), "lock"); err != nil {
				t.Fatal(err)
			}
		}
		waits := map[string]func(tx *sql.Tx) error{
			"InTx": func(tx *sql.Tx) error {
				return s2.InTx(ctx, tx, "k", nil, func(*sql.Tx, gate.Claim) error {
					t.Error("ran while another transaction held the key")
					return nil
				})
			},
			"LockTx": func(tx *sql.Tx) error { return s2.LockTx(ctx, tx, "lock") },
		}
		for name, wait := range waits {
			tx, err := short.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = wait(tx)
			_ = tx.Rollback()
			if !errors.Is(err, gate.ErrInProgress) {
				t.Errorf("%s past the lock timeout: %v, want ErrInProgress", name, err)
			}
		}
		close(release)
		if err := <-first; err != nil {
			t.Fatal(err)
		}
	})
}
