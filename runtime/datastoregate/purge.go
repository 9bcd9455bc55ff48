package datastoregate

import (
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/datastore"
)

// purgePage is how many expired keys Purge reads per query and deletes per
// transaction.
const purgePage = 100

// Purge implements gate.Admin, for a database without a TTL policy on
// expires_at (or to reclaim storage sooner than the policy does). It queries, in
// pages, the keys whose expires_at has passed on the store's clock (a
// single-property index, which Datastore keeps by default), and deletes each
// page in one transaction that re-reads the records and skips any reclaimed
// meanwhile, so a live claim is never deleted. Unknown records have no
// expires_at and never match. limit ≤ 0 means no limit.
func (s *Store) Purge(ctx context.Context, limit int) (int, error) {
	deleted := 0
	for limit <= 0 || deleted < limit {
		page := purgePage
		if limit > 0 {
			page = min(page, limit-deleted)
		}
		q := datastore.NewQuery(s.kind).Namespace(s.ns).
			FilterField(propExpiresAt, "<=", s.clock()).KeysOnly().Limit(page)
		keys, err := s.c.GetAll(ctx, q, nil)
		if err != nil {
			if ctx.Err() != nil {
				return deleted, ctx.Err()
			}
			return deleted, fmt.Errorf("datastoregate: purge: query: %w", err)
		}
		if len(keys) == 0 {
			break
		}
		pending := map[string]bool{}
		err = s.retrying(ctx, "purge", keys[0].Name, func() (bool, error) {
			n, retry, err := s.purgeOnce(ctx, keys, pending)
			deleted += n
			return retry, err
		})
		if err != nil {
			return deleted, err
		}
		if len(keys) < page {
			break
		}
	}
	return deleted, nil
}

// purgeOnce deletes, in one transaction, those of keys still expired. Keys a
// previous attempt deleted with a commit whose answer was lost are in pending;
// found missing now, they count as deleted.
func (s *Store) purgeOnce(ctx context.Context, keys []*datastore.Key, pending map[string]bool) (n int, retry bool, err error) {
	tx, err := s.c.NewTransaction(ctx, datastore.BeginLater)
	if err != nil {
		return 0, false, fmt.Errorf("datastoregate: purge: begin: %w", err)
	}
	es := make([]entity, len(keys))
	missing := make([]bool, len(keys))
	err = tx.GetMulti(keys, es)
	if me, ok := err.(datastore.MultiError); ok {
		err = nil
		for i, e := range me {
			switch {
			case errors.Is(e, datastore.ErrNoSuchEntity):
				missing[i] = true
			case e != nil && err == nil:
				err = e
			}
		}
	}
	if err != nil {
		_ = tx.Rollback()
		if ctx.Err() != nil {
			return 0, false, ctx.Err()
		}
		return 0, isAborted(err), fmt.Errorf("datastoregate: purge: lookup: %w", err)
	}
	now := s.clock()
	var del []*datastore.Key
	for i, k := range keys {
		switch {
		case missing[i] && pending[k.Name]:
			delete(pending, k.Name)
			n++
		case !missing[i] && expiredFor(&es[i].rec, now, s.skew):
			del = append(del, k)
		}
	}
	if len(del) == 0 {
		_ = tx.Rollback()
		return n, false, nil
	}
	if err := tx.DeleteMulti(del); err != nil {
		_ = tx.Rollback()
		return n, false, fmt.Errorf("datastoregate: purge: delete: %w", err)
	}
	_, err = tx.Commit()
	switch {
	case err == nil:
		return n + len(del), false, nil
	case errors.Is(err, datastore.ErrConcurrentTransaction):
		return n, true, fmt.Errorf("datastoregate: purge: commit aborted: %w", err)
	case !mayHaveApplied(err):
		_ = tx.Rollback()
		return n, false, fmt.Errorf("datastoregate: purge: commit: %w", err)
	}
	_ = tx.Rollback()
	for _, k := range del {
		pending[k.Name] = true
	}
	return n, true, fmt.Errorf("datastoregate: purge: commit outcome unknown: %w", err)
}
