package gate_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
)

// TestAckTable pins docs/design.md's ack table, written out here rather than
// read from the code: every outcome's name (the X-Oncegate-Outcome header
// value, which tests/ and the demo read), ack, HTTP status and log level. It
// also checks the table against Pub/Sub's rule that only 102, 200, 201, 202
// and 204 acknowledge a push (Pub/Sub, "Push subscriptions").
func TestAckTable(t *testing.T) {
	const (
		info, warn, errl = slog.LevelInfo, slog.LevelWarn, slog.LevelError
	)
	want := []struct {
		o      gate.Outcome
		name   string
		ack    bool
		status int
		level  slog.Level
	}{
		{gate.OutcomeRan, "ran", true, 204, info},
		{gate.OutcomeDuplicate, "duplicate", true, 204, info},
		{gate.OutcomeInProgress, "in-progress", false, 503, warn},
		{gate.OutcomeBodyFailed, "body-failed", false, 500, errl},
		{gate.OutcomePermanent, "permanent", true, 204, errl},
		{gate.OutcomeNotRecorded, "not-recorded", true, 204, errl},
		{gate.OutcomeFencedOut, "fenced-out", true, 204, errl},
		{gate.OutcomeUnknown, "unknown", false, 503, errl},
		{gate.OutcomeStoreUnavailable, "store-unavailable", false, 503, errl},
		{gate.OutcomeRejected, "rejected", false, 409, errl},
		{gate.OutcomeError, "error", false, 500, errl},
		{gate.OutcomeMalformed, "malformed", false, 400, warn},
		{gate.OutcomeTooLarge, "too-large", false, 413, warn},
		{gate.OutcomeUnauthenticated, "unauthenticated", false, 401, warn},
		{gate.OutcomeForbidden, "forbidden", false, 403, warn},
		{gate.OutcomeNoKey, "no-key", false, 500, errl},
		{gate.OutcomeBadMethod, "bad-method", false, 405, warn},
		{gate.OutcomeBusy, "busy", false, 503, warn},
		{gate.OutcomeReadFailed, "read-failed", false, 503, warn},
		{gate.OutcomeKeyTooLong, "key-too-long", false, 400, errl},
		{gate.OutcomeStopping, "stopping", false, 503, warn},
	}
	all := gate.Outcomes()
	if len(all) != len(want) {
		t.Fatalf("the table has %d outcomes, this test pins %d", len(all), len(want))
	}
	pubsubAcks := map[int]bool{102: true, 200: true, 201: true, 202: true, 204: true}
	for i, w := range want {
		o := w.o
		if all[i] != o {
			t.Errorf("Outcomes()[%d] = %v, want %v", i, all[i], o)
		}
		if o.String() != w.name || o.Ack() != w.ack || o.HTTPStatus() != w.status || o.LogLevel() != w.level {
			t.Errorf("%d: got {%q %v %d %v}, want {%q %v %d %v}", int(o),
				o.String(), o.Ack(), o.HTTPStatus(), o.LogLevel(), w.name, w.ack, w.status, w.level)
		}
		if pubsubAcks[o.HTTPStatus()] != o.Ack() {
			t.Errorf("%s: status %d acks=%v in Pub/Sub, but the table says ack=%v", o, o.HTTPStatus(), pubsubAcks[o.HTTPStatus()], o.Ack())
		}
	}
	for _, bad := range []gate.Outcome{-1, gate.Outcome(len(want))} {
		if bad.String() != "invalid" || bad.Ack() || bad.HTTPStatus() != 500 || bad.LogLevel() != errl {
			t.Errorf("Outcome(%d) answers %q %v %d %v, want invalid, nack, 500, error", int(bad), bad, bad.Ack(), bad.HTTPStatus(), bad.LogLevel())
		}
	}
}

// TestRunResult checks that Run answers as a value what Lock and Mutex answer
// as an error: OutcomeOf(Err) == Outcome on every path, with the namespaced
// key, the fence and the body boundary.
func TestRunResult(t *testing.T) {
	boom := errors.New("boom")
	failing := func(context.Context, gate.Claim) error { return boom }
	for _, tc := range []struct {
		name    string
		verb    gate.Verb
		key     string
		prepare func(t *testing.T, f *fixture)
		body    gate.Body
		want    gate.Outcome
		ran     bool
		fence   int64
	}{
		{"ran", gate.VerbLock, "k", nil, ok, gate.OutcomeRan, true, 1},
		{"duplicate", gate.VerbLock, "k", lockOnce, ok, gate.OutcomeDuplicate, false, 1},
		{"in-progress", gate.VerbLock, "k", holdElsewhere, ok, gate.OutcomeInProgress, false, 1},
		{"body-failed", gate.VerbLock, "k", nil, failing, gate.OutcomeBodyFailed, true, 1},
		{"permanent", gate.VerbLock, "k", nil, func(context.Context, gate.Claim) error { return gate.Permanent(boom) }, gate.OutcomePermanent, true, 1},
		{"failed before", gate.VerbLock, "k", failPermanently, ok, gate.OutcomePermanent, false, 1},
		{"unknown", gate.VerbLock, "k", markUnknown, ok, gate.OutcomeUnknown, false, 1},
		{"empty key", gate.VerbLock, "", nil, ok, gate.OutcomeRejected, false, 0},
		{"bad verb", gate.Verb(9), "k", nil, ok, gate.OutcomeError, false, 0},
		{"mutex ran", gate.VerbMutex, "k", nil, ok, gate.OutcomeRan, true, 1},
		{"mutex again", gate.VerbMutex, "k", mutexOnce, ok, gate.OutcomeRan, true, 3}, // release +1, reclaim +1
		{"mutex on done", gate.VerbMutex, "k", lockOnce, ok, gate.OutcomeInProgress, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, gate.Options{Namespace: "ns"})
			if tc.prepare != nil {
				tc.prepare(t, f)
			}
			var seen gate.Claim
			res := f.gate.Run(context.Background(), tc.verb, tc.key, func(ctx context.Context, c gate.Claim) error {
				seen = c
				return tc.body(ctx, c)
			})
			if res.Outcome != tc.want || gate.OutcomeOf(res.Err) != res.Outcome || (res.Err == nil) != (res.Outcome == gate.OutcomeRan) {
				t.Fatalf("Outcome %v, OutcomeOf(Err) %v (Err %v); want %v", res.Outcome, gate.OutcomeOf(res.Err), res.Err, tc.want)
			}
			if res.Ran != tc.ran || res.Fence != tc.fence || res.Start.IsZero() {
				t.Fatalf("Ran %v Fence %d Start %v; want ran %v fence %d", res.Ran, res.Fence, res.Start, tc.ran, tc.fence)
			}
			if tc.key != "" && tc.verb <= gate.VerbMutex && res.Key != "ns:"+tc.key {
				t.Fatalf("Key %q, want the namespaced key", res.Key)
			}
			if res.Ran && (seen.Key != res.Key || seen.Fence != res.Fence || res.BodyStart.Before(res.Start) || res.BodyEnd.Before(res.BodyStart)) {
				t.Fatalf("claim %+v, result %+v: the body's claim and boundary disagree", seen, res)
			}
			if !res.Ran && (!res.BodyStart.IsZero() || seen != (gate.Claim{})) {
				t.Fatalf("the body did not run but BodyStart is %v and it saw %+v", res.BodyStart, seen)
			}
		})
	}
}

func lockOnce(t *testing.T, f *fixture) {
	t.Helper()
	if err := f.gate.Lock(context.Background(), "k", ok); err != nil {
		t.Fatal(err)
	}
}

func mutexOnce(t *testing.T, f *fixture) {
	t.Helper()
	if err := f.gate.Mutex(context.Background(), "k", ok); err != nil {
		t.Fatal(err)
	}
}

func failPermanently(t *testing.T, f *fixture) {
	t.Helper()
	err := f.gate.Lock(context.Background(), "k", func(context.Context, gate.Claim) error { return gate.Permanent(errors.New("no")) })
	if gate.OutcomeOf(err) != gate.OutcomePermanent {
		t.Fatal(err)
	}
}

func holdElsewhere(t *testing.T, f *fixture) {
	t.Helper()
	if _, err := f.store.Claim(context.Background(), gate.ClaimRequest{Key: "ns:k", Token: "t", Owner: "other", Lease: 1 << 40, TTL: 1 << 40}); err != nil {
		t.Fatal(err)
	}
}

func markUnknown(t *testing.T, f *fixture) {
	t.Helper()
	holdElsewhere(t, f)
	if ok, err := f.store.MarkUnknown(context.Background(), "ns:k", 1); err != nil || !ok {
		t.Fatal(ok, err)
	}
}

// TestBodyErrorWrappingAGateSentinel checks that a body whose error wraps one
// of the gate's own sentinels (a nested Lock's ErrDuplicate or ErrInProgress,
// returned as is) is still a body failure: OutcomeOf, which pull and direct
// callers use, must agree with Run, which push uses, and never ack a body that
// failed and released its claim.
func TestBodyErrorWrappingAGateSentinel(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want gate.Outcome
	}{
		{"duplicate", fmt.Errorf("step 2: %w", gate.ErrDuplicate), gate.OutcomeBodyFailed},
		{"in-progress", fmt.Errorf("step 2: %w", gate.ErrInProgress), gate.OutcomeBodyFailed},
		{"record error", &gate.RecordError{Err: gate.ErrDuplicate}, gate.OutcomeBodyFailed},
		{"permanent duplicate", gate.Permanent(fmt.Errorf("step 2: %w", gate.ErrDuplicate)), gate.OutcomePermanent},
	} {
		for _, verb := range []gate.Verb{gate.VerbLock, gate.VerbMutex} {
			t.Run(fmt.Sprintf("%s/verb%d", tc.name, verb), func(t *testing.T) {
				f := newFixture(t, gate.Options{Namespace: "ns"})
				res := f.gate.Run(context.Background(), verb, "k", func(context.Context, gate.Claim) error { return tc.err })
				if res.Outcome != tc.want || gate.OutcomeOf(res.Err) != tc.want {
					t.Fatalf("Run's outcome %v, OutcomeOf(Err) %v (Err %v); want %v for both", res.Outcome, gate.OutcomeOf(res.Err), res.Err, tc.want)
				}
			})
		}
		if got := gate.OutcomeOf(&gate.BodyError{Key: "k", Err: tc.err}); got != tc.want {
			t.Errorf("%s: OutcomeOf(*BodyError) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
