package sqlgate

import (
	"context"
	"database/sql"
	"runtime"
)

// DefaultMaxConns is the pool bound Open uses when Options.MaxConns is zero:
// the larger of 4 and the number of CPUs, pgxpool's default pool_max_conns
// (github.com/jackc/pgx/v5/pgxpool, ParseConfig: "default 4 or
// runtime.NumCPU(), whichever is greater"). Each delivery holds a connection
// only for the length of one statement (one short transaction for a MySQL
// reclaim), so a few connections serve many concurrent deliveries.
func DefaultMaxConns() int { return max(4, runtime.NumCPU()) }

// applyPoolBound sets db's bound to n connections open (and as many kept idle,
// so a busy pool is not reconnecting) when n > 0.
func applyPoolBound(db *sql.DB, n int) {
	if n > 0 {
		db.SetMaxOpenConns(n)
		db.SetMaxIdleConns(n)
	}
}

// claimSlots returns the semaphore that admits claims on a pool bounded to
// maxOpen connections (nil when unbounded): maxOpen minus a reserve of a
// quarter of them (rounded down, at least one when maxOpen is 2 or more), so
// claims can never hold every connection and a complete, fail, release or
// unknown mark made after a body ran finds one within a statement's time
// instead of waiting behind new claims, which would spend the after-body
// budget. A pool of one gets one slot: no reserve is possible.
func claimSlots(maxOpen int) chan struct{} {
	if maxOpen <= 0 {
		return nil
	}
	reserve := min(max(1, maxOpen/4), maxOpen-1)
	return make(chan struct{}, maxOpen-reserve)
}

// admitClaim waits for a claim slot within ctx (the claim's own deadline) and
// returns the function that frees it. Without a bound it returns at once.
func (s *Store) admitClaim(ctx context.Context) (func(), error) {
	if s.claims == nil {
		return func() {}, nil
	}
	select {
	case s.claims <- struct{}{}:
		return func() { <-s.claims }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
