package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/oncegate/oncegate/internal/emulator"
)

// getWith runs k.get on a recordTB in its own goroutine, as Goexit needs.
func getWith(t *testing.T, k *emulatorKind) (host string, rec *recordTB) {
	rec = &recordTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		host = k.get(rec)
	}()
	<-done
	if k.em != nil {
		t.Cleanup(func() { _ = k.em.Stop() })
	}
	return host, rec
}

func notInstalled(context.Context, emulator.Options) (*emulator.Emulator, error) {
	return nil, &emulator.NotInstalledError{Emulator: "Datastore emulator", Packages: []string{"google-cloud-cli-datastore-emulator"}, Reason: "test"}
}

func brokenStart(context.Context, emulator.Options) (*emulator.Emulator, error) {
	return nil, errors.New("exited before answering")
}

func TestEmulatorResolution(t *testing.T) {
	const envVar = "ONCEGATE_TEST_FAKE_EMULATOR_HOST"
	live := DatastoreEmulator(t)
	tests := []struct {
		name     string
		env, ci  string
		start    func(context.Context, emulator.Options) (*emulator.Emulator, error)
		wantOut  string // "", "skip" or "fatal"
		wantHost string
		wantMsg  string
	}{
		{name: "variable first", env: live, start: notInstalled, wantHost: live},
		{name: "dead variable fails outside CI", env: closedAddr(t), start: emulator.StartDatastore, wantOut: "fatal", wantMsg: envVar},
		{name: "not installed skips outside CI", start: notInstalled, wantOut: "skip", wantMsg: "google-cloud-cli-datastore-emulator"},
		{name: "not installed fails under CI", ci: "true", start: notInstalled, wantOut: "fatal", wantMsg: "google-cloud-cli-datastore-emulator"},
		{name: "broken emulator fails outside CI", start: brokenStart, wantOut: "fatal", wantMsg: "exited before answering"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(envVar, tt.env)
			t.Setenv(envCI, tt.ci)
			k := &emulatorKind{name: "Datastore emulator", kind: "datastore", envVar: envVar, start: tt.start}
			host, rec := getWith(t, k)
			if rec.outcome != tt.wantOut || !strings.Contains(rec.msg, tt.wantMsg) {
				t.Fatalf("outcome = %q (%s); want %q naming %q", rec.outcome, rec.msg, tt.wantOut, tt.wantMsg)
			}
			if tt.wantOut == "" && host != tt.wantHost {
				t.Fatalf("host = %q; want %q", host, tt.wantHost)
			}
		})
	}
}

// TestSharedEmulators: one emulator of each kind per test binary, answering its
// health check, and the same one for every caller.
func TestSharedEmulators(t *testing.T) {
	for _, tt := range []struct {
		name string
		get  func(testing.TB) string
	}{
		{"pubsub", PubSubEmulator},
		{"datastore", DatastoreEmulator},
		{"datastore firestore mode", DatastoreEmulatorFirestoreMode},
		{"firestore", FirestoreDatastoreModeEmulator},
	} {
		t.Run(tt.name, func(t *testing.T) {
			host := tt.get(t)
			if err := probe(emulator.Ping, host); err != nil {
				t.Fatalf("Ping(%s): %v", host, err)
			}
			if again := tt.get(t); again != host {
				t.Fatalf("second call = %s; want the shared %s", again, host)
			}
		})
	}
}

// TestEmulatorLogOnFailure: a failing test that used an emulator gets what the
// emulator logged during it.
func TestEmulatorLogOnFailure(t *testing.T) {
	DatastoreEmulator(t) // started and shared before the inner test takes its offset
	path := datastoreEmulator.em.LogPath()
	rec := &recordTB{TB: t}
	var cleanups []func()
	ft := &failedTB{recordTB: rec, cleanup: func(f func()) { cleanups = append(cleanups, f) }}
	datastoreEmulator.get(ft)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("marker written during the failing test\n")
	f.Close()
	for _, c := range cleanups {
		c()
	}
	if !strings.Contains(ft.logged, "marker written during the failing test") {
		t.Fatalf("failed test logged %q; want the emulator log written during it", ft.logged)
	}
	if strings.Contains(ft.logged, "API endpoint") {
		t.Fatalf("failed test logged the emulator's start-up too: %q", ft.logged)
	}
}

// failedTB is a failed test that records what it logs and its cleanups.
type failedTB struct {
	*recordTB
	cleanup func(func())
	logged  string
}

func (f *failedTB) Failed() bool                 { return true }
func (f *failedTB) Cleanup(fn func())            { f.cleanup(fn) }
func (f *failedTB) Logf(format string, a ...any) { f.logged += fmt.Sprintf(format, a...) }
