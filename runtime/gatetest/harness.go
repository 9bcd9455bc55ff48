package gatetest

import (
	"context"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// Harness makes backends for the suite.
type Harness interface {
	// MakeBackend returns a backend whose records are isolated from every other
	// backend this harness made (a fresh table, key prefix or namespace).
	MakeBackend(ctx context.Context, t *testing.T) (gate.Backend, error)
	// Advance lets at least d pass on the store's clock: a fake clock moves, a
	// server clock is waited out (the suite keeps such waits well under a second).
	Advance(t *testing.T, d time.Duration)
	// Close releases what the harness holds.
	Close()
}

// HarnessMaker makes a Harness; it is called once per test.
type HarnessMaker func(ctx context.Context, t *testing.T) (Harness, error)

// Durations the suite uses. A live lease is long enough that no machine is slow
// enough to lapse it within a test; a short one lapses after one Advance(Lapse).
const (
	LongLease  = 5 * time.Minute
	ShortLease = 100 * time.Millisecond
	Lapse      = 250 * time.Millisecond
	TTL        = time.Hour
)
