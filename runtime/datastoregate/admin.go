package datastoregate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"cloud.google.com/go/datastore"

	"github.com/oncegate/oncegate/runtime/gate"
)

// Inspect implements gate.Backend with one strongly consistent Lookup. An
// expired record (past expires_at on the store's clock) is reported absent.
func (s *Store) Inspect(ctx context.Context, key string) (gate.Record, bool, error) {
	var e entity
	err := s.c.Get(ctx, s.dsKey(key), &e)
	if errors.Is(err, datastore.ErrNoSuchEntity) {
		return gate.Record{}, false, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return gate.Record{}, false, ctx.Err()
		}
		return gate.Record{}, false, fmt.Errorf("datastoregate: inspect %.40q: %w", key, err)
	}
	if expired(&e.rec, s.clock()) {
		return gate.Record{}, false, nil
	}
	return e.rec, true, nil
}

// ListUnresolved implements gate.Admin. It queries state = unknown
// (a single-property index, no composite index needed) and sorts client-side by
// lease expiry, then key, so it reads every unknown record before applying
// limit: unknown records are meant to be few, each awaiting an operator.
func (s *Store) ListUnresolved(ctx context.Context, limit int) ([]gate.Record, error) {
	q := datastore.NewQuery(s.kind).Namespace(s.ns).FilterField(propState, "=", string(gate.StateUnknown))
	var es []entity
	if _, err := s.c.GetAll(ctx, q, &es); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("datastoregate: list unresolved: %w", err)
	}
	out := make([]gate.Record, len(es))
	for i, e := range es {
		out[i] = e.rec
	}
	slices.SortFunc(out, func(a, b gate.Record) int {
		if c := a.LeaseExpiry.Compare(b.LeaseExpiry); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
