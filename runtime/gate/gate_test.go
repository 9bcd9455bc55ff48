package gate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
)

func TestOptionsValidationNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		opts gate.Options
		want string
	}{
		{gate.Options{Lease: -time.Second}, "Options.Lease"},
		{gate.Options{TTL: -1}, "Options.TTL"},
		{gate.Options{Lease: time.Minute, WorkDeadline: 2 * time.Minute}, "Options.WorkDeadline"},
		{gate.Options{Lease: time.Minute, Heartbeat: time.Minute}, "Options.Heartbeat"},
		{gate.Options{Lease: time.Minute, Heartbeat: 21 * time.Second}, "Options.Heartbeat"},
	} {
		_, err := gate.New(memgate.New(nil), &tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error naming %s", tc.opts, err, tc.want)
		}
	}
	if _, err := gate.New(memgate.New(nil), nil); err != nil {
		t.Fatalf("New with nil options: %v", err)
	}
}

func TestEmptyKeyIsRejectedBeforeClaim(t *testing.T) {
	s := memgate.New(nil)
	g, _ := gate.New(s, nil)
	err := g.Lock(context.Background(), "", ok)
	if !errors.Is(err, gate.ErrInvalidKey) || gate.OutcomeOf(err).Ack() || s.Len() != 0 {
		t.Fatalf("err = %v, records %d; want ErrInvalidKey, nack, nothing written", err, s.Len())
	}
}

type downStore struct{ *memgate.Store }

func (downStore) Claim(context.Context, gate.ClaimRequest) (gate.ClaimResult, error) {
	return gate.ClaimResult{}, errors.New("dial tcp: connection refused")
}

func TestStoreDownFailsClosed(t *testing.T) {
	g, _ := gate.New(downStore{memgate.New(nil)}, &gate.Options{Logger: quiet})
	ran := false
	err := g.Lock(context.Background(), "k", func(context.Context, gate.Claim) error { ran = true; return nil })
	if ran || !errors.Is(err, gate.ErrStoreUnavailable) || gate.OutcomeOf(err).Ack() {
		t.Fatalf("ran=%v err=%v; the body must not run unguarded and the message must be nacked", ran, err)
	}
}

func TestOnDuplicateHookPanicIsIgnored(t *testing.T) {
	calls := 0
	g, _ := gate.New(memgate.New(nil), &gate.Options{Logger: quiet, OnDuplicate: func(context.Context, gate.Record) {
		calls++
		panic("hook bug")
	}})
	ctx := context.Background()
	_ = g.Lock(ctx, "k", ok)
	if err := g.Lock(ctx, "k", ok); !errors.Is(err, gate.ErrDuplicate) || calls != 1 {
		t.Fatalf("err = %v, hook calls %d; want duplicate despite the hook's panic", err, calls)
	}
}

func TestBodyPanicReleasesClaim(t *testing.T) {
	s := memgate.New(nil)
	g, _ := gate.New(s, &gate.Options{Logger: quiet})
	ctx := context.Background()
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("panic was swallowed")
			}
		}()
		_ = g.Lock(ctx, "k", func(context.Context, gate.Claim) error { panic("body bug") })
	}()
	if err := g.Lock(ctx, "k", ok); err != nil {
		t.Fatalf("after a panicking body the key must be free: %v", err)
	}
}

func TestOutcomeOf(t *testing.T) {
	rec := gate.Record{Key: "k"}
	for _, tc := range []struct {
		err  error
		want gate.Outcome
		ack  bool
	}{
		{nil, gate.OutcomeRan, true},
		{&gate.RecordError{Err: gate.ErrDuplicate, Record: rec}, gate.OutcomeDuplicate, true},
		{&gate.RecordError{Err: gate.ErrInProgress, Record: rec}, gate.OutcomeInProgress, false},
		{&gate.BodyError{Err: errors.New("x")}, gate.OutcomeBodyFailed, false},
		{&gate.BodyError{Err: gate.Permanent(errors.New("x"))}, gate.OutcomePermanent, true},
		{&gate.RecordError{Err: gate.ErrFailed, Record: rec}, gate.OutcomePermanent, true},
		{fmt.Errorf("%w: x", gate.ErrNotRecorded), gate.OutcomeNotRecorded, true},
		{&gate.RecordError{Err: gate.ErrFencedOut, Record: rec}, gate.OutcomeFencedOut, true},
		{&gate.RecordError{Err: gate.ErrUnknownOutcome, Record: rec}, gate.OutcomeUnknown, false},
		{fmt.Errorf("%w: x", gate.ErrStoreUnavailable), gate.OutcomeStoreUnavailable, false},
		{fmt.Errorf("claim: %w", gate.ErrKeyReuse), gate.OutcomeRejected, false},
		{gate.ErrInvalidKey, gate.OutcomeRejected, false},
		{errors.New("other"), gate.OutcomeError, false},
	} {
		if got := gate.OutcomeOf(tc.err); got != tc.want || got.Ack() != tc.ack {
			t.Errorf("OutcomeOf(%v) = %v (ack %v), want %v (ack %v)", tc.err, got, got.Ack(), tc.want, tc.ack)
		}
	}
}

func TestStoreKey(t *testing.T) {
	long := strings.Repeat("a", 2000)
	for _, tc := range []struct {
		key    string
		hashed bool
	}{
		{"orders:1", false},
		{strings.Repeat("a", 1500), false},
		{long, true},
		{"bad\xffutf8", true},
		{"nul\x00byte", true},
		{"og-sha256:literal", true},
	} {
		got := gate.StoreKey(tc.key, 1500)
		if (got != tc.key) != tc.hashed || len(got) > 1500 {
			t.Errorf("StoreKey(%.20q) = %.30q, hashed %v", tc.key, got, tc.hashed)
		}
	}
	if gate.StoreKey(long, 1500) == gate.StoreKey(long+"b", 1500) {
		t.Fatal("distinct long keys hashed alike")
	}
}
