package faults_test

import (
	"context"
	"testing"

	"cloud.google.com/go/datastore"

	"github.com/oncegate/oncegate/internal/emulator"
	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/datastoregate"
)

// The Datastore rows of this package run on Google's Datastore emulator, shared by
// the test binary (internal/testenv), each in its own kind. Only the fault
// injection of datastore_test.go (aborted commits, lost commit responses,
// latency) stays on internal/dsfake: the emulator cannot be told to do that.

// datastoreEmulatorClient returns a client of the shared Datastore emulator, closed
// when t ends.
func datastoreEmulatorClient(t *testing.T) *datastore.Client {
	t.Helper()
	c, err := datastore.NewClient(context.Background(), emulator.DefaultProject, emulator.ClientOptions(testenv.DatastoreEmulator(t))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// datastoreEmulatorStore returns a datastoregate Store in a kind of its own on the
// shared Datastore emulator; o may be nil.
func datastoreEmulatorStore(t *testing.T, o *datastoregate.Options) *datastoregate.Store {
	t.Helper()
	var opts datastoregate.Options
	if o != nil {
		opts = *o
	}
	opts.Kind = testenv.UniqueName(t, "faults")
	s, err := datastoregate.New(datastoreEmulatorClient(t), &opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// datastoreEmulatorEnv returns the worker processes' backend variables for a kind
// of their own on the shared Datastore emulator.
func datastoreEmulatorEnv(t *testing.T) []string {
	return []string{"ONCEGATE_BACKEND=datastore", "DATASTORE_EMULATOR_HOST=" + testenv.DatastoreEmulator(t),
		"GOOGLE_CLOUD_PROJECT=" + emulator.DefaultProject, "ONCEGATE_DATASTORE_KIND=" + testenv.UniqueName(t, "faults")}
}
