package dlock

import (
	"errors"
	"fmt"
	"strings"

	"github.com/oncegate/oncegate/runtime/gate"
)

// Sentinel errors. Callers branch on them with errors.Is, never on messages. The
// package also returns the gate sentinels gate.ErrInvalidKey (empty key),
// gate.ErrFenceExhausted (a token would pass gate.MaxFence), gate.ErrLeaseLost
// (a renewal was refused) and gate.ErrFencedOut (another holder took the key
// while a scope's function ran).
var (
	// ErrLocked: the key is held by a live lease. Returned by Acquire and Do,
	// wrapped in a *gate.RecordError whose Record names the holder (Owner) and
	// its lease expiry.
	ErrLocked = errors.New("oncegate: lock held")
	// ErrNotLock: the key's record is done, failed or unknown, which no lock
	// leaves behind: something other than this package wrote it (a Gate sharing
	// the namespace). Returned by Acquire, AcquireWait and Do, wrapped in a
	// *gate.RecordError.
	ErrNotLock = errors.New("oncegate: key holds a record that is not a lock")
)

// Capability is a set of optional backend interfaces a Client can require.
type Capability uint8

// The capabilities, each an optional interface of the gate package.
const (
	// CanRenew is gate.Renewer: Lock.Renew, Client.Renew, Scope and Do.
	CanRenew Capability = 1 << iota
	// CanAdvanceFence is gate.FenceAdvancer: Client.AdvanceFence, the recovery
	// procedure after store data loss.
	CanAdvanceFence
	// CanInspect is gate.Inspector: Inspect, IsLocked, Owner, TTL, and Release
	// and Renew by owner.
	CanInspect
	// RequireFencing is every capability a fenced lock relies on: its token can be
	// kept across renewals, checked against the store, and restored above every
	// token handed out after the store lost data.
	RequireFencing = CanRenew | CanAdvanceFence | CanInspect
)

// String names the gate interfaces in c, such as "gate.Renewer|gate.Inspector".
func (c Capability) String() string {
	var names []string
	for _, n := range capNames {
		if c&n.c != 0 {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "|")
}

var capNames = []struct {
	c    Capability
	name string
}{{CanRenew, "gate.Renewer"}, {CanAdvanceFence, "gate.FenceAdvancer"}, {CanInspect, "gate.Inspector"}}

// CapabilityError reports a backend that lacks an optional interface. New returns
// it for Options.Require; a call needing a missing capability returns it too. It
// unwraps to errors.ErrUnsupported.
type CapabilityError struct {
	// Missing is the capabilities the backend lacks.
	Missing Capability
	// Backend is the backend's Go type, such as "*memgate.Store".
	Backend string
	// Op is what needed them: "dlock.New" or the method name.
	Op string
}

func (e *CapabilityError) Error() string {
	return fmt.Sprintf("%s: backend %s does not implement %s; use a backend that does, or drop it from dlock.Options.Require", e.Op, e.Backend, e.Missing)
}

func (e *CapabilityError) Unwrap() error { return errors.ErrUnsupported }

// missing returns the capabilities in want that b lacks.
func missing(b gate.Backend, want Capability) Capability {
	var m Capability
	if _, ok := b.(gate.Renewer); !ok && want&CanRenew != 0 {
		m |= CanRenew
	}
	if _, ok := b.(gate.FenceAdvancer); !ok && want&CanAdvanceFence != 0 {
		m |= CanAdvanceFence
	}
	if _, ok := b.(gate.Inspector); !ok && want&CanInspect != 0 {
		m |= CanInspect
	}
	return m
}
