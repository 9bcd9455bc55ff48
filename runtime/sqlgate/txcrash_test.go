package sqlgate_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// Crash stages: after the body's write (before the done record), and after
// InTx returned (before the commit).
const (
	stageWrite  = "after-write"
	stageCommit = "before-commit"
)

// TestKilledConnectionLeavesNothing kills the transaction's connection between
// the body's write and the commit, at both stages: on PostgreSQL with
// pg_terminate_backend on the transaction's backend, on MySQL/MariaDB with KILL
// on its connection id, on SQLite by SIGKILL of the process holding the
// transaction. No claim and no write survive, and the next run starts afresh at
// fence 1.
func TestKilledConnectionLeavesNothing(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		s := newStore(t, openDB(t, d, nil), d)
		e := newEffects(t, s)
		for _, stage := range []string{stageWrite, stageCommit} {
			key := "crash-" + stage
			var err error
			if d == sqlgate.SQLite {
				crashWorker(t, s, e, key, stage)
			} else {
				err = crashConnection(ctx, t, s, e, key, stage)
				if err == nil {
					t.Fatalf("%s: the transaction committed after its connection was killed", stage)
				}
			}
			expectRecord(t, s, e, key, "", 0, 0)
			if err := s.RunTx(ctx, key, nil, e.write); err != nil {
				t.Fatalf("%s: run after the crash: %v", stage, err)
			}
			expectRecord(t, s, e, key, gate.StateDone, 1, 1)
		}
	})
}

// crashConnection runs key's transaction and kills its connection at stage. It
// returns the error the transaction ended with.
func crashConnection(ctx context.Context, t *testing.T, s *sqlgate.Store, e *effects, key, stage string) error {
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	id := backendID(t, s.Dialect(), tx)
	err = s.InTx(ctx, tx, key, nil, func(tx *sql.Tx, c gate.Claim) error {
		if err := e.write(tx, c); err != nil {
			return err
		}
		if stage == stageWrite {
			killBackend(t, s, id)
		}
		return nil
	})
	if stage == stageWrite {
		if err == nil {
			t.Errorf("InTx after its connection was killed = nil, want an error")
		}
		return fmt.Errorf("InTx: %w", err)
	}
	if err != nil {
		t.Fatalf("InTx: %v", err)
	}
	killBackend(t, s, id)
	return tx.Commit()
}

// backendID returns the server's id of tx's connection.
func backendID(t *testing.T, d sqlgate.Dialect, tx *sql.Tx) int64 {
	t.Helper()
	q := "SELECT pg_backend_pid()"
	if d == sqlgate.MySQL {
		q = "SELECT CONNECTION_ID()"
	}
	var id int64
	if err := tx.QueryRow(q).Scan(&id); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return id
}

// killBackend ends the server connection id from another connection, and
// returns once it is gone.
func killBackend(t *testing.T, s *sqlgate.Store, id int64) {
	t.Helper()
	if s.Dialect() == sqlgate.MySQL {
		if _, err := s.DB().Exec(fmt.Sprintf("KILL CONNECTION %d", id)); err != nil {
			t.Fatalf("KILL: %v", err)
		}
		return
	}
	var gone bool // PostgreSQL 14+: the timeout waits for the backend to exit
	if err := s.DB().QueryRow("SELECT pg_terminate_backend($1, 10000)", id).Scan(&gone); err != nil || !gone {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", id, gone, err)
	}
}

// Environment of the crash worker process.
const (
	crashDBEnv      = "SQLGATE_TEST_CRASH_DB"
	crashTableEnv   = "SQLGATE_TEST_CRASH_TABLE"
	crashEffectsEnv = "SQLGATE_TEST_CRASH_EFFECTS"
	crashKeyEnv     = "SQLGATE_TEST_CRASH_KEY"
	crashStageEnv   = "SQLGATE_TEST_CRASH_STAGE"
)

// crashWorker starts a process that runs key's transaction on s's SQLite file
// up to stage and then blocks, and kills it with SIGKILL there.
func crashWorker(t *testing.T, s *sqlgate.Store, e *effects, key, stage string) {
	t.Helper()
	var file string
	if err := s.DB().QueryRow("SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestTxCrashWorkerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDBEnv+"="+file, crashTableEnv+"="+s.Table(),
		crashEffectsEnv+"="+e.table, crashKeyEnv+"="+key, crashStageEnv+"="+stage)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe() // held open: the worker blocks reading it
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stdin.Close() }()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	reached := false
	for lines.Scan() {
		if lines.Text() == "reached "+stage {
			reached = true
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if !reached {
		t.Fatalf("the worker never reached %s", stage)
	}
}

// TestTxCrashWorkerProcess is the process crashWorker kills; it does nothing
// unless started by it.
func TestTxCrashWorkerProcess(t *testing.T) {
	file := os.Getenv(crashDBEnv)
	if file == "" {
		t.Skip("crash worker process only")
	}
	db, err := sql.Open("sqlite", file+"?_busy_timeout=10000&_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	s, err := sqlgate.New(db, sqlgate.SQLite, &sqlgate.Options{Table: os.Getenv(crashTableEnv)})
	if err != nil {
		t.Fatal(err)
	}
	e := &effects{db: db, d: sqlgate.SQLite, table: os.Getenv(crashEffectsEnv)}
	stage := os.Getenv(crashStageEnv)
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = s.InTx(ctx, tx, os.Getenv(crashKeyEnv), nil, func(tx *sql.Tx, c gate.Claim) error {
		if err := e.write(tx, c); err != nil {
			return err
		}
		if stage == stageWrite {
			fmt.Println("reached", stage)
			_, _ = io.Copy(io.Discard, os.Stdin) // killed here
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("reached", stage)
	_, _ = io.Copy(io.Discard, os.Stdin) // killed here, before the commit
	t.Fatal("stdin closed before the kill")
}
