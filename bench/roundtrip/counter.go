package roundtrip

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Counter holds named counts. The zero value is ready to use.
type Counter struct {
	mu sync.Mutex
	n  map[string]int64
}

// Add adds d to the count named name.
func (c *Counter) Add(name string, d int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int64{}
	}
	c.n[name] += d
}

// Get returns the count named name (0 when never added).
func (c *Counter) Get(name string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

// Snapshot returns a copy of every count.
func (c *Counter) Snapshot() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// Reset sets every count to zero.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.n)
}

// Sum returns the total of the counts whose names are in names, or of every
// count when names is empty.
func (c *Counter) Sum(names ...string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var t int64
	for k, v := range c.n {
		if len(names) == 0 || slices.Contains(names, k) {
			t += v
		}
	}
	return t
}

// String lists the non-zero counts as "name=n" in name order, for messages.
func (c *Counter) String() string {
	s := c.Snapshot()
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s)) {
		if s[k] != 0 {
			parts = append(parts, k+"="+strconv.FormatInt(s[k], 10))
		}
	}
	return strings.Join(parts, " ")
}
