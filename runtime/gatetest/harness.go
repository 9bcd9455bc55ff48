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

// ExpiryDeleter is an optional Harness ability, for a store that deletes a record
// by itself once its expires_at passes (Redis with PEXPIREAT at expires_at). Such
// a harness returns true: the suite then expects a claim after a record expired to
// start a fresh record at fence 1 (docs/design.md's invariant 2 makes that safe) and
// Purge to find nothing left to delete, instead of an expired record that lingers
// until reclaimed with fence+1 or purged.
type ExpiryDeleter interface {
	DeletesAtExpiry() bool
}

// deletesAtExpiry reports whether h's store deletes records itself at expires_at.
func deletesAtExpiry(h Harness) bool {
	d, ok := h.(ExpiryDeleter)
	return ok && d.DeletesAtExpiry()
}
