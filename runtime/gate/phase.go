package gate

import (
	"context"
	"fmt"
	"time"
)

// Each store call the Gate makes runs in a phase of its own, bounded by
// Options.StoreTimeout: the claim, the complete, the unknown mark, a release.
// The phases after the body are detached from the caller's cancellation (a
// push client that hangs up must not leave the record claimed) and do not
// share a budget, so a complete that hangs to its end still leaves the
// unknown mark a whole StoreTimeout (sizing invariant 5).

// retryPauseMin is the first pause between two attempts of a retried phase;
// it doubles up to a quarter of the phase.
const retryPauseMin = 25 * time.Millisecond

// phase returns a context for one store phase after the body: detached from
// ctx's cancellation, bounded by StoreTimeout.
func (g *Gate) phase(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), g.opts.StoreTimeout)
}

// retry calls op until it answers without an error or pctx, the phase, ends.
// Each attempt gets at most half of StoreTimeout, so an attempt stuck on a
// dead connection (the store froze, then came back) is retried on a fresh one
// within the phase. It returns op's last answer and the number of attempts.
// Backends do not retry on their own (Backend's contract); the Gate does here,
// and only for calls whose repeat is safe: the fence makes a second complete
// or unknown mark of the same claim a no-op that answers false.
func (g *Gate) retry(pctx context.Context, op func(context.Context) (bool, error)) (ok bool, attempts int, err error) {
	pause := retryPauseMin
	for {
		attempts++
		actx, cancel := context.WithTimeout(pctx, g.opts.StoreTimeout/2)
		ok, err = op(actx)
		cancel()
		if err == nil || pctx.Err() != nil {
			return ok, attempts, err
		}
		if dl, has := pctx.Deadline(); has && time.Until(dl) <= pause {
			return ok, attempts, err
		}
		t := time.NewTimer(pause)
		select {
		case <-pctx.Done():
			t.Stop()
			return ok, attempts, err
		case <-t.C:
		}
		pause = min(2*pause, max(g.opts.StoreTimeout/4, retryPauseMin))
	}
}

// recordAt reads key's record and reports whether it still carries fence. A retried complete or unknown mark that
// answers false asks it whether an earlier attempt, whose answer was lost,
// committed: a record at this claim's fence can only have been moved by this
// claim, since every other holder's claim raised the fence (and sizing
// invariant 2 keeps the record, and so its fence, while this holder lives).
// The error is Inspect's: the record could not be read, so nothing is known.
func (g *Gate) recordAt(ctx context.Context, key string, fence int64) (Record, bool, error) {
	rec, found, err := g.b.Inspect(ctx, key)
	if err != nil {
		return Record{}, false, fmt.Errorf("inspect %q: %w", key, err)
	}
	if !found || rec.Fence != fence {
		return Record{}, false, nil
	}
	return rec, true, nil
}
