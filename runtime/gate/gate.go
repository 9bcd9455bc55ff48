package gate

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Claim describes a won claim to the body.
type Claim struct {
	// Key is the namespaced key the record is stored under.
	Key string
	// Fence is the claim's fencing token. Downstream writes should carry it (for
	// example as an X-Fencing-Token header) so the sink can refuse a stale holder.
	Fence int64
	// LeaseExpiry is the lease's end on the store's clock at claim time.
	LeaseExpiry time.Time
	// Owner is this holder's name.
	Owner string
}

// Body is the guarded work. Its context carries the gateway's work deadline and
// is cancelled with a cause matching ErrLeaseLost when the heartbeat loses the
// lease. It keeps the caller context's values but not its cancellation: a push
// client that disconnects must not cut a side effect in half.
type Body func(ctx context.Context, c Claim) error

// Gate runs bodies at most once (Lock) or one at a time (Mutex) per key. A Gate is
// safe for concurrent use.
type Gate struct {
	b     Backend
	opts  Options
	cache *terminalCache
}

// New returns a Gate over b. It returns an error naming the field when opts is
// invalid.
func New(b Backend, opts *Options) (*Gate, error) {
	if b == nil {
		return nil, errors.New("gate.New: backend is nil")
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Gate{b: b, opts: o, cache: newTerminalCache(o.CacheSize)}, nil
}

// Backend returns the Gate's backend.
func (g *Gate) Backend() Backend { return g.b }

// Options returns the Gate's options with defaults applied.
func (g *Gate) Options() Options { return g.opts }

// Key returns the namespaced key that key is stored under.
func (g *Gate) Key(key string) string {
	if g.opts.Namespace == "" {
		return key
	}
	return g.opts.Namespace + ":" + key
}

// Lock de-duplicates: it claims key, runs body, and records the key done, so a
// later call on the key returns ErrDuplicate without running. It returns nil when
// body ran and was recorded, and otherwise an error matching one of:
// ErrDuplicate, ErrInProgress, ErrFailed, ErrUnknownOutcome (each in a
// *RecordError); ErrStoreUnavailable, ErrKeyReuse, ErrFenceExhausted,
// ErrInvalidKey (body did not run); a *BodyError (body failed; claim released, or
// recorded failed for a Permanent error); ErrNotRecorded or ErrFencedOut (body
// ran). OutcomeOf maps the answer onto the ack policy.
func (g *Gate) Lock(ctx context.Context, key string, body Body) error {
	return g.run(ctx, call{key: key, mode: VerbLock}, verbBody{plain: body}).Err
}

// Mutex serializes: it claims key, runs body and releases the claim (fence+1), so
// every call runs, one at a time per key. It returns nil when body ran, or an
// error matching ErrInProgress (held elsewhere, or the key is done by a Lock),
// ErrUnknownOutcome, ErrStoreUnavailable, ErrInvalidKey, a *BodyError, or
// ErrFencedOut (the lease lapsed and another holder took the key while body ran).
func (g *Gate) Mutex(ctx context.Context, key string, body Body) error {
	return g.run(ctx, call{key: key, mode: VerbMutex}, verbBody{plain: body}).Err
}

// Verb selects what Run does: Lock or Mutex.
type Verb int

const (
	// VerbLock de-duplicates, as Lock.
	VerbLock Verb = iota
	// VerbMutex serializes, as Mutex.
	VerbMutex
)

// Result is what one verb call came to, as a value: the outcome the gate knew
// where it returned, the error Lock or Mutex return for it, the record, and
// the claim/body boundary an adapter times its claim and body by.
type Result struct {
	// Outcome is the ack-table outcome; OutcomeOf(Err) == Outcome.
	Outcome Outcome
	// Err is what Lock or Mutex returns; nil exactly when Outcome is OutcomeRan.
	Err error
	// Key is the namespaced key (Gate.Key); empty when the key was empty.
	Key string
	// Fence is the claim's fence when the body ran, else the refusing record's
	// (0 when there is none).
	Fence int64
	// Record is the record behind the answer: the claimed one (done when
	// recorded) or the one that refused the claim; zero when no record was read.
	Record Record
	// Ran reports whether the body ran.
	Ran bool
	// Start is when the call began; BodyStart and BodyEnd bracket the body
	// (zero when it did not run). The claim took BodyStart − Start when the
	// body ran.
	Start, BodyStart, BodyEnd time.Time
}

// Run is Lock (VerbLock) or Mutex (VerbMutex) answering a Result, for
// adapters: the outcome, the namespaced key, the fence and the claim/body
// boundary come back as values, so nothing has to be decoded from the error
// or observed from inside body. Another v answers OutcomeError without a
// claim.
func (g *Gate) Run(ctx context.Context, v Verb, key string, body Body) Result {
	if v != VerbLock && v != VerbMutex {
		return Result{Outcome: OutcomeError, Start: time.Now(),
			Err: fmt.Errorf("gate.Run: verb %d is not VerbLock or VerbMutex", v)}
	}
	return g.run(ctx, call{key: key, mode: v}, verbBody{plain: body})
}

// verbBody is the work run invokes: a Body (Lock, Mutex, Run) or a body that
// returns a result to store (Do).
type verbBody struct {
	plain  Body
	stored func(context.Context, Claim) ([]byte, error)
}

func (b verbBody) call(ctx context.Context, c Claim) ([]byte, error) {
	if b.stored != nil {
		return b.stored(ctx, c)
	}
	return nil, b.plain(ctx, c)
}

// call is one verb invocation.
type call struct {
	key         string
	mode        Verb
	fingerprint []byte
}

// answer sets the outcome and error of r.
func (r Result) answer(o Outcome, err error) Result {
	r.Outcome, r.Err = o, err
	return r
}

// refused is r answered by a record that refused the claim.
func (r Result) refused(o Outcome, sentinel error, rec Record) Result {
	r.Record, r.Fence = rec, rec.Fence
	return r.answer(o, &RecordError{Err: sentinel, Record: rec})
}

// run is the shared claim → body → complete/release path. Every return says
// its outcome; the Result carries the record found on a refused claim (for
// stored-result replay).
func (g *Gate) run(ctx context.Context, c call, body verbBody) Result {
	res := Result{Start: time.Now()}
	if c.key == "" {
		return res.answer(OutcomeRejected, fmt.Errorf("%w: key is empty", ErrInvalidKey))
	}
	key := g.Key(c.key)
	res.Key = key
	log := keyLogger{l: g.opts.Logger, key: key}
	if c.mode == VerbLock {
		if rec, hit := g.cache.get(key, res.Start); hit {
			return g.refuseTerminal(ctx, c, res, rec)
		}
	}
	// The store starts the lease when it applies the claim, no earlier than now:
	// sent + Lease is a local bound the store's lease never ends before.
	sent := res.Start
	cctx, cancelClaim := context.WithTimeout(ctx, g.opts.StoreTimeout) // the claim's phase
	cr, err := g.b.Claim(cctx, ClaimRequest{
		Key: key, Token: newToken(), Owner: g.opts.Owner,
		Lease: g.opts.Lease, TTL: g.opts.TTL, Fingerprint: c.fingerprint,
	})
	cancelClaim()
	if err != nil {
		if errors.Is(err, ErrKeyReuse) || errors.Is(err, ErrFenceExhausted) {
			return res.answer(OutcomeRejected, fmt.Errorf("claim %q: %w", key, err))
		}
		return res.answer(OutcomeStoreUnavailable, fmt.Errorf("%w: claim %q: %w", ErrStoreUnavailable, key, err))
	}
	rec := cr.Record
	switch cr.Status {
	case Won:
	case HeldByOther:
		return res.refused(OutcomeInProgress, ErrInProgress, rec)
	case AlreadyDone, Failed:
		if c.mode == VerbMutex {
			return res.refused(OutcomeInProgress, ErrInProgress, rec)
		}
		g.cache.put(rec, earliest(rec.ExpiresAt, time.Now().Add(g.opts.CacheTTL)))
		return g.refuseTerminal(ctx, c, res, rec)
	case Unknown:
		log.fence = rec.Fence
		log.Error("oncegate: reconcile key: outcome unknown")
		return res.refused(OutcomeUnknown, ErrUnknownOutcome, rec)
	default:
		res.Record, res.Fence = rec, rec.Fence
		return res.answer(OutcomeStoreUnavailable, fmt.Errorf("%w: claim %q: backend answered invalid status %d", ErrStoreUnavailable, key, cr.Status))
	}

	cl := Claim{Key: key, Fence: rec.Fence, LeaseExpiry: rec.LeaseExpiry, Owner: g.opts.Owner}
	log.fence = cl.Fence
	res.Record, res.Fence, res.Ran = rec, cl.Fence, true
	res.BodyStart = time.Now()
	result, bodyErr := g.invoke(ctx, cl, sent, body)
	res.BodyEnd = time.Now()
	if bodyErr != nil {
		sctx, cancel := g.phase(ctx)
		defer cancel()
		return res.answer(bodyOutcome(bodyErr), g.afterBodyError(sctx, log, c, cl, bodyErr))
	}
	if c.mode == VerbMutex {
		sctx, cancel := g.phase(ctx)
		defer cancel()
		ok, err := g.b.Release(sctx, key, cl.Fence)
		switch {
		case err != nil:
			log.Warn("oncegate: release after mutex body failed; the lease will lapse", "err", err)
		case !ok:
			log.Error("oncegate: fenced out: the lease lapsed and another holder took the key while the body ran")
			return res.answer(OutcomeFencedOut, &RecordError{Err: ErrFencedOut, Record: rec})
		}
		return res.answer(OutcomeRan, nil)
	}
	if o, err := g.complete(ctx, log, rec, cl, result); err != nil {
		return res.answer(o, err)
	}
	res.Record.State, res.Record.Result = StateDone, result
	g.cache.put(res.Record, time.Now().Add(g.opts.CacheTTL))
	return res.answer(OutcomeRan, nil)
}

// complete records cl done after its body ran: the complete, retried within
// its phase, then, when it could not be written, the unknown mark in a phase
// of its own. It returns nil when the record is done (by this call or by an
// earlier attempt whose answer was lost), an error matching ErrNotRecorded
// when it is not (marked unknown where the backend can), or a *RecordError
// matching ErrFencedOut when another holder took the key, each with its
// outcome.
func (g *Gate) complete(ctx context.Context, log keyLogger, rec Record, cl Claim, result []byte) (Outcome, error) {
	cctx, cancel := g.phase(ctx)
	defer cancel()
	ok, attempts, err := g.retry(cctx, func(actx context.Context) (bool, error) {
		return g.b.Complete(actx, Completion{Key: cl.Key, Fence: cl.Fence, TTL: g.opts.TTL, Result: result})
	})
	if err == nil && !ok && attempts > 1 {
		// An earlier attempt may have committed before its answer was lost.
		// When the record cannot be read the gate does not know which, so it
		// goes on as for a failed complete, never as fenced out.
		now, at, rerr := g.recordAt(cctx, cl.Key, cl.Fence)
		switch {
		case rerr != nil:
			err = fmt.Errorf("a retry was refused and the record could not be read: %w", rerr)
		case at && now.State == StateDone:
			ok = true
		}
	}
	switch {
	case err == nil && ok:
		return OutcomeRan, nil
	case err == nil:
		log.Error("oncegate: fenced out: the body ran but another holder reclaimed the key; check the sink for a double effect")
		return OutcomeFencedOut, &RecordError{Err: ErrFencedOut, Record: rec}
	}
	log.Error("oncegate: body ran but the done record was not written", "err", err, "attempts", attempts)
	uctx, cancelU := g.phase(ctx)
	defer cancelU()
	marked, _, merr := g.retry(uctx, func(actx context.Context) (bool, error) { return g.b.MarkUnknown(actx, cl.Key, cl.Fence) })
	if merr == nil && !marked {
		// Not claimed at this fence any more: a late complete, or an earlier
		// mark, landed; otherwise another holder took the key.
		now, at, rerr := g.recordAt(uctx, cl.Key, cl.Fence)
		switch {
		case rerr != nil:
			merr = fmt.Errorf("the mark was refused and the record could not be read: %w", rerr)
		case at && now.State == StateDone:
			log.Warn("oncegate: the done record was written after all (a complete's answer was lost)")
			return OutcomeRan, nil
		case at && now.State == StateUnknown:
			marked = true
		}
	}
	switch {
	case merr != nil:
		log.Error("oncegate: marking the record unknown failed too", "err", merr)
	case !marked:
		log.Error("oncegate: the record is no longer this holder's: another holder may have reclaimed the key")
	}
	return OutcomeNotRecorded, fmt.Errorf("%w: complete %q: %w", ErrNotRecorded, cl.Key, err)
}

// refuseTerminal answers a lock call that found key done or failed (in the store
// or the cache): a fingerprint mismatch is key reuse, done is a duplicate.
func (g *Gate) refuseTerminal(ctx context.Context, c call, res Result, rec Record) Result {
	if len(c.fingerprint) > 0 && len(rec.Fingerprint) > 0 && !bytes.Equal(c.fingerprint, rec.Fingerprint) {
		return res.answer(OutcomeRejected, fmt.Errorf("claim %q: %w", rec.Key, ErrKeyReuse))
	}
	if rec.State == StateFailed {
		return res.refused(OutcomePermanent, ErrFailed, rec)
	}
	g.observeDuplicate(ctx, rec)
	return res.refused(OutcomeDuplicate, ErrDuplicate, rec)
}

func earliest(a, b time.Time) time.Time {
	if !a.IsZero() && a.Before(b) {
		return a
	}
	return b
}

// afterBodyError records a permanent failure or releases the claim.
func (g *Gate) afterBodyError(ctx context.Context, log keyLogger, c call, cl Claim, bodyErr error) error {
	be := &BodyError{Key: cl.Key, Fence: cl.Fence, Err: bodyErr}
	if c.mode == VerbLock && IsPermanent(bodyErr) {
		recorded, err := g.b.Fail(ctx, Completion{Key: cl.Key, Fence: cl.Fence, TTL: g.opts.TTL, Result: []byte(bodyErr.Error())})
		if err != nil || !recorded {
			log.Error("oncegate: permanent failure not recorded", "err", err, "recorded", recorded)
		} else {
			log.Error("oncegate: body failed permanently; recorded failed", "err", bodyErr)
		}
		return be
	}
	if ok, err := g.b.Release(ctx, cl.Key, cl.Fence); err != nil {
		log.Warn("oncegate: release after body error failed; the lease will lapse", "err", err)
	} else if !ok {
		log.Warn("oncegate: release after body error refused: another holder reclaimed the key")
	}
	return be
}

// invoke runs body under the work deadline and the heartbeat. Without a
// heartbeat the deadline is also bounded by sent + Lease, so a claim answer that
// arrived late cannot let the body outlive its lease. A panic in body releases
// the claim and is re-raised.
func (g *Gate) invoke(ctx context.Context, cl Claim, sent time.Time, body verbBody) (result []byte, err error) {
	bctx, cancelCause := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelCause(nil)
	deadline := time.Now().Add(g.opts.WorkDeadline)
	if g.opts.Heartbeat == 0 {
		if end := sent.Add(g.opts.Lease); end.Before(deadline) {
			deadline = end
		}
	}
	bctx, cancel := context.WithDeadline(bctx, deadline)
	defer cancel()
	if g.opts.Heartbeat > 0 {
		stop := g.startHeartbeat(bctx, cancelCause, cl, sent)
		defer stop()
	}
	defer func() {
		if p := recover(); p != nil {
			sctx, c := g.phase(ctx)
			defer c()
			if _, rerr := g.b.Release(sctx, cl.Key, cl.Fence); rerr != nil {
				g.opts.Logger.Warn("oncegate: release after panic failed", "key", cl.Key, "err", rerr)
			}
			panic(p)
		}
	}()
	return body.call(bctx, cl)
}

func (g *Gate) observeDuplicate(ctx context.Context, rec Record) {
	if g.opts.OnDuplicate == nil {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			g.opts.Logger.Error("oncegate: OnDuplicate hook panicked; ignored", "key", rec.Key, "panic", fmt.Sprint(p))
		}
	}()
	g.opts.OnDuplicate(ctx, rec)
}

// keyLogger adds the key and fence to a log line only when one is written, so
// the hot path allocates nothing for logging.
type keyLogger struct {
	l     *slog.Logger
	key   string
	fence int64
}

func (k keyLogger) Error(msg string, args ...any) {
	k.l.Error(msg, append([]any{"key", k.key, "fence", k.fence}, args...)...)
}

func (k keyLogger) Warn(msg string, args ...any) {
	k.l.Warn(msg, append([]any{"key", k.key, "fence", k.fence}, args...)...)
}

// newToken returns a random claim token.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b[:])
}
