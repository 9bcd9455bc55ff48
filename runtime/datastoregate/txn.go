package datastoregate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"cloud.google.com/go/datastore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/oncegate/oncegate/runtime/gate"
)

// step decides, from the record as read inside the transaction (nil when
// absent), the record to write (nil to write nothing) and the call's answer. It
// must not touch anything outside its arguments: a retry calls it again.
type step[T any] func(now time.Time, cur *gate.Record) (write *gate.Record, out T, err error)

// lostWrite is what an attempt whose commit outcome is unknown wrote, and the
// answer it would have given.
type lostWrite[T any] struct {
	rec gate.Record
	out T
}

// update runs fn in one read-write transaction on key's record. The
// transaction begins lazily with the lookup (datastore.BeginLater), so an
// attempt is two RPCs: Lookup then Commit, or Lookup then Rollback when fn
// writes nothing.
//
// An attempt whose commit aborted (contention) did not apply and is retried. An
// attempt whose commit failed otherwise may have applied (its answer was lost);
// it is retried too, and a retry that reads back exactly the record the lost
// commit wrote returns that commit's answer instead of applying fn again. A claim
// carries its random token, and the other writes carry a fresh microsecond
// timestamp or a state only the fence holder can reach, so a matching record is
// the lost commit's own. Up to s.tries attempts are made, with jittered backoff
// between them; then the last error is returned, wrapped.
func update[T any](ctx context.Context, s *Store, op, key string, fn step[T]) (T, error) {
	dk := s.dsKey(key)
	var lost []lostWrite[T]
	var out T
	err := s.retrying(ctx, op, key, func() (retry bool, err error) {
		out, retry, err = attempt(ctx, s, dk, fn, &lost)
		return retry, err
	})
	return out, err
}

// retrying calls try until it succeeds, fails for good (retry false), ctx ends
// or s.tries attempts were made, pausing with jittered backoff between attempts.
// After the last attempt the error is wrapped with op and key.
func (s *Store) retrying(ctx context.Context, op, key string, try func() (retry bool, err error)) error {
	for n := 1; ; n++ {
		retry, err := try()
		if err == nil || !retry {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if n >= s.tries {
			return fmt.Errorf("datastoregate: %s %.40q: gave up after %d attempts: %w", op, key, n, err)
		}
		s.log.DebugContext(ctx, "datastoregate: retrying transaction", "op", op, "key", key, "attempt", n, "err", err)
		if err := s.pause(ctx, n); err != nil {
			return err
		}
	}
}

// attempt makes one transaction attempt; retry reports whether err is worth
// another.
func attempt[T any](ctx context.Context, s *Store, dk *datastore.Key, fn step[T], lost *[]lostWrite[T]) (out T, retry bool, err error) {
	tx, err := s.c.NewTransaction(ctx, datastore.BeginLater)
	if err != nil {
		return out, false, fmt.Errorf("datastoregate: begin: %w", err)
	}
	var e entity
	err = tx.Get(dk, &e)
	found := err == nil
	if errors.Is(err, datastore.ErrNoSuchEntity) {
		err = nil
	}
	if err != nil {
		_ = tx.Rollback()
		if ctx.Err() != nil {
			return out, false, ctx.Err()
		}
		return out, isAborted(err), fmt.Errorf("datastoregate: lookup: %w", err)
	}
	var cur *gate.Record
	if found {
		cur = &e.rec
		for _, l := range *lost {
			if sameRecord(*cur, l.rec) {
				_ = tx.Rollback()
				return l.out, false, nil
			}
		}
	}
	write, out, err := fn(s.clock(), cur)
	if err != nil || write == nil {
		_ = tx.Rollback()
		return out, false, err
	}
	var zero T
	rec := normalize(*write)
	if err := checkSize(rec); err != nil {
		_ = tx.Rollback()
		return zero, false, err
	}
	if _, err := tx.Put(dk, &entity{rec: rec}); err != nil {
		_ = tx.Rollback()
		return zero, false, fmt.Errorf("datastoregate: put: %w", err)
	}
	_, err = tx.Commit()
	switch {
	case err == nil:
		return out, false, nil
	case errors.Is(err, datastore.ErrConcurrentTransaction):
		return zero, true, fmt.Errorf("datastoregate: commit aborted: %w", err)
	case !mayHaveApplied(err):
		_ = tx.Rollback()
		return zero, false, fmt.Errorf("datastoregate: commit: %w", err)
	}
	// The commit may have applied. Roll back in case it never reached the
	// service (the transaction would hold its locks until it timed out).
	_ = tx.Rollback()
	*lost = append(*lost, lostWrite[T]{rec: rec, out: out})
	return zero, true, fmt.Errorf("datastoregate: commit outcome unknown: %w", err)
}

// mayHaveApplied reports whether a failed Commit may nevertheless have applied:
// every gRPC code but those that mean the request was refused outright.
// InvalidArgument is included: when a Commit's response is lost with
// Unavailable, the client library retries it and the service answers the retry
// of the committed transaction with InvalidArgument (google-cloud-go issue 1434).
func mayHaveApplied(err error) bool {
	s, ok := status.FromError(err)
	if !ok {
		return false
	}
	switch s.Code() {
	case codes.PermissionDenied, codes.Unauthenticated, codes.NotFound, codes.FailedPrecondition,
		codes.Unimplemented, codes.OutOfRange, codes.AlreadyExists:
		return false
	}
	return true
}

// pause waits before retry n (1-based): a random duration between half and all
// of backoff·2^(n−1), capped at maxRetryDelay, or until ctx is done.
func (s *Store) pause(ctx context.Context, n int) error {
	d := s.backoff << min(n-1, 20)
	if d <= 0 || d > maxRetryDelay {
		d = maxRetryDelay
	}
	d = d/2 + rand.N(d/2+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// isAborted reports whether a read failed for contention (codes.Aborted): the
// transaction did nothing and may be retried.
func isAborted(err error) bool { return status.Code(err) == codes.Aborted }
