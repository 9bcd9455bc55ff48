package fencedsink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// Term is one holder's run of writes to one key under one token: the first guard
// takes the term (Take: the stored fence must be lower than the token), every
// later one holds it (Hold: at most the token). The first refused guard ends the
// term for good: later guards return ErrStaleToken without touching the
// database. Make one Term per lock acquisition and keep it as long as the lock;
// a fresh Term for a token that already wrote is refused, since its first guard
// is a Take. A Term is safe for concurrent use; its guards run one at a time.
type Term struct {
	s     *Sink
	key   string
	token int64

	mu    sync.Mutex
	taken bool
	ended bool
}

// Term returns a new term for key under token (for example dlock.Lock.Token or
// gate.Claim.Fence).
func (s *Sink) Term(key string, token int64) *Term {
	return &Term{s: s, key: key, token: token}
}

// Key returns the term's key.
func (t *Term) Key() string { return t.key }

// Token returns the term's token.
func (t *Term) Token() int64 { return t.token }

// Ended reports whether a guard was refused, ending the term.
func (t *Term) Ended() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ended
}

// Guard runs the term's guard in x, which should be the transaction that writes
// the data, and returns nil when the write may go ahead. It returns an error
// matching ErrStaleToken when the term is over (now or earlier), or the
// database's error. The term counts as taken once a Take succeeded, even if x
// later rolls back: that only relaxes the next guard from "lower than the token"
// to "at most the token", which no other holder's token passes. Call it once
// per transaction: guards of one Term run one at a time, so a second guard in
// a transaction whose row lock another guard of the same Term is waiting for
// would deadlock.
func (t *Term) Guard(ctx context.Context, x Execer) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return fmt.Errorf("guard %q with token %d: %w: the term ended earlier", t.key, t.token, ErrStaleToken)
	}
	guard := t.s.Take
	if t.taken {
		guard = t.s.Hold
	}
	err := guard(ctx, x, t.key, t.token)
	switch {
	case err == nil:
		t.taken = true
	case errors.Is(err, ErrStaleToken):
		t.ended = true
	}
	return err
}

// Write runs fn in a new transaction on db after the term's guard, and commits
// when fn returns nil. It returns an error matching ErrStaleToken (fn did not
// run), fn's error (rolled back), or the database's error. A panic in fn rolls
// back and is re-raised.
func (t *Term) Write(ctx context.Context, db *sql.DB, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if t.Ended() {
		return fmt.Errorf("write %q with token %d: %w: the term ended earlier", t.key, t.token, ErrStaleToken)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("write %q: begin: %w", t.key, err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback()
		}
	}()
	if err := t.Guard(ctx, tx); err != nil {
		return err
	}
	if err := fn(ctx, tx); err != nil {
		return err
	}
	committed = true
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("write %q: commit: %w", t.key, err)
	}
	return nil
}
