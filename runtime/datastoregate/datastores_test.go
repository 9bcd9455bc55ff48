package datastoregate_test

import (
	"context"
	"errors"
	"testing"

	"cloud.google.com/go/datastore"

	"github.com/oncegate/oncegate/internal/dsfake"
	"github.com/oncegate/oncegate/internal/emulator"
	"github.com/oncegate/oncegate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// datastore is one Datastore the tests run on.
type datastoreKind struct {
	name   string
	client func(t *testing.T) *datastore.Client
}

// datastores lists the fake and the Datastore emulator, in its legacy Datastore
// mode (consistency 1.0) and in its Firestore in Datastore mode (the mode of
// production databases), by subtest name. The Firestore emulator in Datastore mode is not among them: it aborts every
// transaction begun by a lookup (see TestFirestoreEmulatorAbortsBeginLater).
var datastores = []datastoreKind{
	{"fake", func(t *testing.T) *datastore.Client { return dsfake.Start(t).Client(t, "") }},
	{"emulator", func(t *testing.T) *datastore.Client { return emulatorClient(t, testenv.DatastoreEmulator(t)) }},
	{"emulator-firestore-mode", func(t *testing.T) *datastore.Client {
		return emulatorClient(t, testenv.DatastoreEmulatorFirestoreMode(t))
	}},
}

// emulatorClient returns a client of the emulator on host, closed when t ends.
func emulatorClient(t *testing.T, host string) *datastore.Client {
	t.Helper()
	c, err := datastore.NewClient(context.Background(), emulator.DefaultProject, emulator.ClientOptions(host)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

type counter struct{ N int }

// incr runs one read-then-write transaction on key with opts, in one attempt.
func incr(ctx context.Context, c *datastore.Client, key *datastore.Key, opts ...datastore.TransactionOption) error {
	_, err := c.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
		var e counter
		if err := tx.Get(key, &e); err != nil && !errors.Is(err, datastore.ErrNoSuchEntity) {
			return err
		}
		e.N++
		_, err := tx.Put(key, &e)
		return err
	}, append(opts, datastore.MaxAttempts(1))...)
	return err
}

// TestFirestoreEmulatorAbortsBeginLater pins why the contract suite does not run on
// the Firestore emulator in Datastore mode (cloud-firestore-emulator 1.19.9, Cloud
// SDK 528): a transaction that begins with its first lookup (Lookup with
// read_options.new_transaction, the client's datastore.BeginLater, which every
// datastoregate write uses) aborts at commit with "concurrent transaction" although
// nothing else runs, while the same transaction begun by BeginTransaction commits.
// Production Firestore in Datastore mode accepts new_transaction (ReadOptions,
// Datastore API v1 reference). When this test fails, the emulator has been fixed:
// add it to datastores.
func TestFirestoreEmulatorAbortsBeginLater(t *testing.T) {
	c := emulatorClient(t, testenv.FirestoreDatastoreModeEmulator(t))
	ctx := t.Context()
	key := datastore.NameKey("Counter", testenv.UniqueName(t, "counter"), nil)
	if err := incr(ctx, c, key); err != nil {
		t.Fatalf("transaction begun by BeginTransaction: %v; want it to commit", err)
	}
	err := incr(ctx, c, key, datastore.BeginLater)
	if !errors.Is(err, datastore.ErrConcurrentTransaction) {
		t.Fatalf("transaction begun by its lookup: %v; want datastore.ErrConcurrentTransaction (the emulator bug this test pins)", err)
	}
}
