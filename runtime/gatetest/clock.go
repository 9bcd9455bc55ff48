package gatetest

import (
	"sync"
	"time"
)

// Epoch is the time a NewClock(Epoch) starts at in this project's tests.
var Epoch = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// Clock is a clock tests move by hand, for backends and gates with an injectable
// clock (memgate.Options.Now, datastoregate.Options.Now, dlock.Options.Now). It
// is safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock reading start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (backward for a negative d).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
