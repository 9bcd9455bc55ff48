package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/oncegate/oncegate/internal/emulator"
)

// logOnFailureBytes bounds how much of an emulator's log a failed test prints.
const logOnFailureBytes = 16 << 10

// emulatorKind finds one kind of shared emulator, once per test binary.
type emulatorKind struct {
	name   string // "Pub/Sub emulator", for messages
	kind   string // names the log directory; no "-" (see dirOwner)
	envVar string
	start  func(context.Context, emulator.Options) (*emulator.Emulator, error)

	once  sync.Once
	host  string
	em    *emulator.Emulator // the private emulator, when one was started
	err   error
	fatal bool
}

var pubsubEmulator = &emulatorKind{
	name:   "Pub/Sub emulator",
	kind:   "pubsub",
	envVar: "ONCEGATE_TEST_PUBSUB_EMULATOR_HOST",
	start:  emulator.StartPubSub,
}

var datastoreEmulator = &emulatorKind{
	name:   "Datastore emulator",
	kind:   "datastore",
	envVar: "ONCEGATE_TEST_DATASTORE_EMULATOR_HOST",
	start:  emulator.StartDatastore,
}

var datastoreFirestoreModeEmulator = &emulatorKind{
	name:   "Datastore emulator (Firestore in Datastore mode)",
	kind:   "datastorefs",
	envVar: "ONCEGATE_TEST_DATASTORE_FIRESTORE_MODE_EMULATOR_HOST",
	start:  emulator.StartDatastoreFirestoreMode,
}

var firestoreEmulator = &emulatorKind{
	name:   "Firestore emulator (Datastore mode)",
	kind:   "firestore",
	envVar: "ONCEGATE_TEST_FIRESTORE_EMULATOR_HOST",
	start:  emulator.StartFirestoreDatastoreMode,
}

// PubSubEmulator returns the host:port of a Google Pub/Sub emulator for the test
// (the value for PUBSUB_EMULATOR_HOST; see emulator.ClientOptions for a client that
// does not touch the environment): the one ONCEGATE_TEST_PUBSUB_EMULATOR_HOST names,
// else one started for the whole test binary. Tests share it: isolate topics and
// subscriptions with UniqueName. See the package doc for skips and failures.
func PubSubEmulator(t testing.TB) string {
	t.Helper()
	return pubsubEmulator.get(t)
}

// DatastoreEmulator returns the host:port of a Google Datastore emulator (in memory,
// consistency 1.0) for the test (the value for DATASTORE_EMULATOR_HOST): the one
// ONCEGATE_TEST_DATASTORE_EMULATOR_HOST names, else one started for the whole test
// binary. Tests share it: isolate entities with a namespace from UniqueName. Any
// project ID works. See the package doc for skips and failures.
func DatastoreEmulator(t testing.TB) string {
	t.Helper()
	return datastoreEmulator.get(t)
}

// DatastoreEmulatorFirestoreMode returns the host:port of a Google Datastore
// emulator in its Firestore in Datastore mode (in memory, strongly consistent, the
// behaviour of production databases), found and shared as DatastoreEmulator's is
// (variable ONCEGATE_TEST_DATASTORE_FIRESTORE_MODE_EMULATOR_HOST).
func DatastoreEmulatorFirestoreMode(t testing.TB) string {
	t.Helper()
	return datastoreFirestoreModeEmulator.get(t)
}

// FirestoreDatastoreModeEmulator returns the host:port of the Firestore emulator in
// Datastore mode, found and shared as DatastoreEmulator's is (variable
// ONCEGATE_TEST_FIRESTORE_EMULATOR_HOST).
func FirestoreDatastoreModeEmulator(t testing.TB) string {
	t.Helper()
	return firestoreEmulator.get(t)
}

// get returns the emulator's host:port, or skips or fails the test; when the test
// fails, what the emulator logged during it is printed.
func (k *emulatorKind) get(t testing.TB) string {
	t.Helper()
	k.once.Do(func() { k.resolve(t) })
	if k.err != nil {
		unavailable(t, k.name, k.fatal, k.err)
	}
	if k.em != nil {
		printLogOnFailure(t, k.name, k.em.LogPath())
	}
	return k.host
}

// resolve uses the variable, else starts a private emulator shared by the binary.
// Only a missing installation may skip: an installed emulator that does not start is
// a failure even outside CI.
func (k *emulatorKind) resolve(t testing.TB) {
	if v := os.Getenv(k.envVar); v != "" && !truthy(os.Getenv(envForcePrivate)) {
		if err := probe(emulator.Ping, v); err != nil {
			k.err, k.fatal = fmt.Errorf("%s=%s: %w", k.envVar, v, err), true
			return
		}
		k.host = v
		t.Logf("testenv: %s: using %s=%s", k.name, k.envVar, v)
		return
	}
	dir, err := makeDir(k.kind)
	if err != nil {
		k.err, k.fatal = err, true
		return
	}
	em, err := k.start(context.Background(), emulator.Options{Dir: dir})
	if err != nil {
		_ = os.RemoveAll(dir)
		k.err, k.fatal = err, !errors.Is(err, emulator.ErrNotInstalled)
		return
	}
	registerSharedEmulator(em, dir)
	k.em, k.host = em, em.Host()
	t.Logf("testenv: %s: started on %s (pid %d, log %s)", k.name, em.Host(), em.PID(), em.LogPath())
}

// printLogOnFailure logs, when t ends failed, what the log at path gained from now on.
func printLogOnFailure(t testing.TB, name, path string) {
	var from int64
	if fi, err := os.Stat(path); err == nil {
		from = fi.Size()
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		f, err := os.Open(path)
		if err != nil {
			t.Logf("testenv: %s log: %v", name, err)
			return
		}
		defer f.Close()
		end, _ := f.Seek(0, io.SeekEnd)
		if end-from > logOnFailureBytes {
			from = end - logOnFailureBytes
		}
		b := make([]byte, end-from)
		n, _ := f.ReadAt(b, from)
		t.Logf("testenv: %s log during this test (%s, from byte %d):\n%s", name, path, from, b[:n])
	})
}
