package dsfake

import (
	"context"
	"maps"
	"path"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The RPC method names Count and FailNext take.
const (
	MethodLookup           = "Lookup"
	MethodRunQuery         = "RunQuery"
	MethodBeginTransaction = "BeginTransaction"
	MethodCommit           = "Commit"
	MethodRollback         = "Rollback"
	MethodAllocateIds      = "AllocateIds"
	MethodReserveIds       = "ReserveIds"
)

type failure struct {
	n    int
	code codes.Code
}

// faults holds the injected faults and the RPC counters.
type faults struct {
	mu       sync.Mutex
	abort    int
	drop     int
	dropCode codes.Code
	latency  time.Duration
	fail     map[string]failure
	counts   map[string]int
}

func newFaults() *faults {
	return &faults{fail: map[string]failure{}, counts: map[string]int{}}
}

func (f *faults) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.abort, f.drop, f.latency = 0, 0, 0
	f.fail, f.counts = map[string]failure{}, map[string]int{}
}

// intercept counts every RPC, then applies latency and FailNext faults.
func (f *faults) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	method := path.Base(info.FullMethod)
	f.mu.Lock()
	f.counts[method]++
	lat := f.latency
	fl, failing := f.fail[method]
	if failing {
		if fl.n--; fl.n <= 0 {
			delete(f.fail, method)
		} else {
			f.fail[method] = fl
		}
	}
	f.mu.Unlock()
	if lat > 0 {
		t := time.NewTimer(lat)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		// Checked after the wait too: when a descheduled handler wakes with both
		// ready, select may pick the timer, and a call past its deadline must
		// still not apply.
		if err := ctx.Err(); err != nil {
			return nil, status.FromContextError(err).Err()
		}
	}
	if failing {
		return nil, status.Errorf(fl.code, "dsfake: %s failed (fault injection)", method)
	}
	return h(ctx, req)
}

// takeAbort reports whether the current transactional commit is to abort.
func (f *faults) takeAbort() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.abort > 0 {
		f.abort--
		return true
	}
	return false
}

// takeDrop reports whether the current commit's response is to be dropped, and
// with which code.
func (f *faults) takeDrop() (codes.Code, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.drop > 0 {
		f.drop--
		return f.dropCode, true
	}
	return codes.OK, false
}

// AbortCommits makes the next n transactional commits fail with codes.Aborted
// without applying, as contention would; the transaction ends. It replaces any
// earlier count; n ≤ 0 clears it.
func (s *Server) AbortCommits(n int) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.f.abort = max(n, 0)
}

// DropCommitResponses makes the next n commits apply and then answer code
// instead of their response, as when the response is lost on the way back.
// codes.OK means codes.Unavailable. Note that the client library retries a
// Commit that failed with codes.Unavailable on its own; the fake answers the
// retry of a committed transaction with codes.InvalidArgument ("The referenced
// transaction has expired or is no longer valid."), as the real service does,
// and that is the error the caller sees. It replaces any earlier count; n ≤ 0
// clears it.
func (s *Server) DropCommitResponses(n int, code codes.Code) {
	if code == codes.OK {
		code = codes.Unavailable
	}
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.f.drop, s.f.dropCode = max(n, 0), code
}

// FailNext makes the next n calls of method (MethodLookup, MethodCommit, …)
// fail with code before they reach the store, so nothing is read or applied.
// Retries the client library makes count as calls. n ≤ 0 clears it.
func (s *Server) FailNext(method string, n int, code codes.Code) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	if n <= 0 {
		delete(s.f.fail, method)
		return
	}
	s.f.fail[method] = failure{n: n, code: code}
}

// SetLatency delays every RPC by d before it is handled (0 removes the delay).
// A caller's deadline still applies: the RPC then fails with
// codes.DeadlineExceeded without touching the store.
func (s *Server) SetLatency(d time.Duration) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.f.latency = d
}

// Count returns how many calls of method (MethodLookup, …) the fake received,
// including ones failed by fault injection and retries the client made.
func (s *Server) Count(method string) int {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	return s.f.counts[method]
}

// Counts returns a copy of the per-method call counters.
func (s *Server) Counts() map[string]int {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	return maps.Clone(s.f.counts)
}

// Total returns how many RPCs of any method the fake received.
func (s *Server) Total() int {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	n := 0
	for _, c := range s.f.counts {
		n += c
	}
	return n
}

// ResetCounts zeroes the call counters.
func (s *Server) ResetCounts() {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.f.counts = map[string]int{}
}
