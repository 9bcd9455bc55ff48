package testenv

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// shared holds the private servers shared by the test binary, for Main to stop.
var shared struct {
	mu      sync.Mutex
	servers []*Server
}

// registerShared records a shared private server for Main to close.
func registerShared(s *Server) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.servers = append(shared.servers, s)
}

// Main runs the package's tests, then stops the shared private servers they started
// and removes their directories. Call it from TestMain:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
// It returns normally, so the test binary exits with m.Run's status (Go 1.15 and
// later pass it to os.Exit when TestMain returns).
func Main(m *testing.M) {
	m.Run()
	stopShared()
}

// stopShared closes every shared private server concurrently.
func stopShared() {
	shared.mu.Lock()
	servers := shared.servers
	shared.servers = nil
	shared.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(func() {
			if err := s.close(); err != nil {
				fmt.Fprintf(os.Stderr, "testenv: stop %s on %s: %v\n", s.flavor.kind, s.Addr(), err)
			}
		})
	}
	wg.Wait()
}
