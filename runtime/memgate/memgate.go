// Package memgate is an in-memory gate.Backend for tests and single-process use.
// It implements gate.Admin (the whole port), and its clock can be injected so
// tests move time without sleeping. Records vanish with the process: it gives
// no protection across instances or restarts.
package memgate

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// Options configure a Store. The zero value (or nil) means defaults.
type Options struct {
	// Now is the store's clock. Default time.Now.
	Now func() time.Time
}

// Store is the in-memory backend. It is safe for concurrent use.
type Store struct {
	mu   sync.Mutex
	now  func() time.Time
	recs map[string]*gate.Record
}

var _ gate.Admin = (*Store)(nil)

// New returns an empty Store.
func New(opts *Options) *Store {
	s := &Store{now: time.Now, recs: map[string]*gate.Record{}}
	if opts != nil && opts.Now != nil {
		s.now = opts.Now
	}
	return s
}

// Len returns how many records the store holds, expired ones included.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.recs)
}

func (s *Store) clock() time.Time { return s.now().UTC() }

// live returns the record for key unless it is absent or past expires_at.
func (s *Store) live(key string, now time.Time) (*gate.Record, bool) {
	r, ok := s.recs[key]
	if !ok || expired(r, now) {
		return r, false
	}
	return r, true
}

func expired(r *gate.Record, now time.Time) bool {
	return r.State != gate.StateUnknown && !r.ExpiresAt.IsZero() && !now.Before(r.ExpiresAt)
}

// Claim implements gate.Backend.
func (s *Store) Claim(_ context.Context, req gate.ClaimRequest) (gate.ClaimResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock()
	r, live := s.live(req.Key, now)
	if live && len(req.Fingerprint) > 0 && len(r.Fingerprint) > 0 && !bytes.Equal(req.Fingerprint, r.Fingerprint) {
		return gate.ClaimResult{Status: 0, Record: *r}, fmt.Errorf("key %q: %w", req.Key, gate.ErrKeyReuse)
	}
	fence := int64(1)
	if r != nil {
		fence = r.Fence + 1
	}
	if live {
		switch r.State {
		case gate.StateDone:
			return gate.ClaimResult{Status: gate.AlreadyDone, Record: copyRec(r)}, nil
		case gate.StateFailed:
			return gate.ClaimResult{Status: gate.Failed, Record: copyRec(r)}, nil
		case gate.StateUnknown:
			return gate.ClaimResult{Status: gate.Unknown, Record: copyRec(r)}, nil
		case gate.StateClaimed:
			if req.Token != "" && r.ClaimToken == req.Token {
				return gate.ClaimResult{Status: gate.Won, Record: copyRec(r)}, nil
			}
			if now.Before(r.LeaseExpiry) {
				return gate.ClaimResult{Status: gate.HeldByOther, Record: copyRec(r)}, nil
			}
		}
	}
	if fence > gate.MaxFence {
		return gate.ClaimResult{}, fmt.Errorf("key %q: %w", req.Key, gate.ErrFenceExhausted)
	}
	lease := now.Add(req.Lease)
	fp := req.Fingerprint
	if len(fp) == 0 && live {
		fp = r.Fingerprint
	}
	nr := &gate.Record{
		Key: req.Key, State: gate.StateClaimed, Fence: fence, LeaseExpiry: lease,
		ExpiresAt: lease.Add(req.TTL), ClaimToken: req.Token, Owner: req.Owner,
		Fingerprint: bytes.Clone(fp),
	}
	s.recs[req.Key] = nr
	return gate.ClaimResult{Status: gate.Won, Record: copyRec(nr)}, nil
}

// held returns the claimed record for key whose fence equals fence.
func (s *Store) held(key string, fence int64) (*gate.Record, bool) {
	r, ok := s.recs[key]
	if !ok || r.State != gate.StateClaimed || r.Fence != fence {
		return nil, false
	}
	return r, true
}

// Complete implements gate.Backend.
func (s *Store) Complete(_ context.Context, c gate.Completion) (bool, error) {
	return s.finish(c, gate.StateDone), nil
}

// Fail implements gate.Backend.
func (s *Store) Fail(_ context.Context, c gate.Completion) (bool, error) {
	return s.finish(c, gate.StateFailed), nil
}

func (s *Store) finish(c gate.Completion, st gate.State) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.held(c.Key, c.Fence)
	if !ok {
		return false
	}
	now := s.clock()
	r.State, r.DoneAt, r.ExpiresAt, r.Result = st, now, now.Add(c.TTL), bytes.Clone(c.Result)
	return true
}

// Release implements gate.Backend.
func (s *Store) Release(_ context.Context, key string, fence int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.held(key, fence)
	if !ok {
		return false, nil
	}
	if r.Fence >= gate.MaxFence {
		return false, fmt.Errorf("key %q: %w", key, gate.ErrFenceExhausted)
	}
	r.Fence++
	r.LeaseExpiry = s.clock()
	r.ClaimToken = ""
	return true, nil
}

// Renew implements gate.Backend.
func (s *Store) Renew(_ context.Context, key string, fence int64, lease, ttl time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.held(key, fence)
	if !ok {
		return false, nil
	}
	r.LeaseExpiry = s.clock().Add(lease)
	if e := r.LeaseExpiry.Add(ttl); e.After(r.ExpiresAt) {
		r.ExpiresAt = e
	}
	return true, nil
}

// MarkUnknown implements gate.Backend.
func (s *Store) MarkUnknown(_ context.Context, key string, fence int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.held(key, fence)
	if !ok {
		return false, nil
	}
	r.State, r.ExpiresAt = gate.StateUnknown, time.Time{}
	return true, nil
}

// AdvanceFence implements gate.Backend.
func (s *Store) AdvanceFence(_ context.Context, key string, atLeast int64, ttl time.Duration) (int64, error) {
	if atLeast > gate.MaxFence {
		return 0, fmt.Errorf("key %q: advance to %d: %w", key, atLeast, gate.ErrFenceExhausted)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock()
	r, ok := s.recs[key]
	if !ok {
		r = &gate.Record{Key: key, State: gate.StateClaimed, LeaseExpiry: now, ExpiresAt: now.Add(ttl)}
		s.recs[key] = r
	}
	if atLeast > r.Fence {
		r.Fence = atLeast
	}
	return r.Fence, nil
}

// Inspect implements gate.Backend.
func (s *Store) Inspect(_ context.Context, key string) (gate.Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.live(key, s.clock())
	if !ok {
		return gate.Record{}, false, nil
	}
	return copyRec(r), true, nil
}

// Purge implements gate.Admin.
func (s *Store) Purge(_ context.Context, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now, n := s.clock(), 0
	for k, r := range s.recs {
		if limit > 0 && n >= limit {
			break
		}
		if expired(r, now) {
			delete(s.recs, k)
			n++
		}
	}
	return n, nil
}

// ListUnresolved implements gate.Admin.
func (s *Store) ListUnresolved(_ context.Context, limit int) ([]gate.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []gate.Record
	for _, r := range s.recs {
		if r.State == gate.StateUnknown {
			out = append(out, copyRec(r))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].LeaseExpiry.Equal(out[j].LeaseExpiry) {
			return out[i].LeaseExpiry.Before(out[j].LeaseExpiry)
		}
		return out[i].Key < out[j].Key
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Resolve implements gate.Admin.
func (s *Store) Resolve(_ context.Context, key string, asDone bool, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[key]
	switch {
	case !ok:
		return fmt.Errorf("resolve %q: %w", key, gate.ErrNotFound)
	case r.State != gate.StateUnknown:
		return fmt.Errorf("resolve %q (state %s): %w", key, r.State, gate.ErrNotUnknown)
	}
	now := s.clock()
	if asDone {
		r.State, r.DoneAt, r.ExpiresAt = gate.StateDone, now, now.Add(ttl)
		return nil
	}
	if r.Fence >= gate.MaxFence {
		return fmt.Errorf("resolve %q: %w", key, gate.ErrFenceExhausted)
	}
	r.State, r.Fence, r.LeaseExpiry, r.ExpiresAt, r.ClaimToken = gate.StateClaimed, r.Fence+1, now, now.Add(ttl), ""
	return nil
}

func copyRec(r *gate.Record) gate.Record {
	c := *r
	c.Fingerprint = bytes.Clone(r.Fingerprint)
	c.Result = bytes.Clone(r.Result)
	return c
}
