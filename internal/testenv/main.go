package testenv

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/oncegate/oncegate/internal/emulator"
)

// shared holds the private servers and emulators shared by the test binary, for
// Main to stop.
var shared struct {
	mu        sync.Mutex
	servers   []*Server
	emulators []sharedEmulator
}

// sharedEmulator is a shared emulator and the directory of its log.
type sharedEmulator struct {
	em  *emulator.Emulator
	dir string
}

// registerSharedEmulator records a shared emulator for Main to stop.
func registerSharedEmulator(em *emulator.Emulator, dir string) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.emulators = append(shared.emulators, sharedEmulator{em: em, dir: dir})
}

// registerShared records a shared private server for Main to close.
func registerShared(s *Server) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.servers = append(shared.servers, s)
}

// Main runs the package's tests, then stops the shared private servers and emulators
// they started and removes their directories. Call it from TestMain:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
// It returns normally, so the test binary exits with m.Run's status (Go 1.15 and
// later pass it to os.Exit when TestMain returns).
func Main(m *testing.M) {
	m.Run()
	stopShared()
}

// stopShared closes every shared private server and emulator concurrently.
func stopShared() {
	shared.mu.Lock()
	servers, emulators := shared.servers, shared.emulators
	shared.servers, shared.emulators = nil, nil
	shared.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range emulators {
		wg.Go(func() {
			if err := e.em.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "testenv: stop %v\n", err)
			}
			_ = os.RemoveAll(e.dir)
		})
	}
	for _, s := range servers {
		wg.Go(func() {
			if err := s.close(); err != nil {
				fmt.Fprintf(os.Stderr, "testenv: stop %s on %s: %v\n", s.flavor.kind, s.Addr(), err)
			}
		})
	}
	wg.Wait()
}
