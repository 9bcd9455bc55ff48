package demo_test

import (
	"strings"
	"sync"
)

// syncBuilder is a strings.Builder safe for concurrent writes that calls
// onWrite (outside its lock) with each write.
type syncBuilder struct {
	mu      sync.Mutex
	b       strings.Builder
	onWrite func(string)
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	n, err := s.b.Write(p)
	s.mu.Unlock()
	if s.onWrite != nil {
		s.onWrite(string(p))
	}
	return n, err
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
