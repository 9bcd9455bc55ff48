package sqlgate_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// TestAnyKeyBytes stores keys the indexed column cannot hold as they are (NUL
// bytes, invalid UTF-8, 10 KB, a literal hashed form) and reports them as given:
// on claims, and from ListUnresolved, which has only the table to go by.
func TestAnyKeyBytes(t *testing.T) {
	keys := []string{"a\x00b", "\xff\xfe", strings.Repeat("é", 5000), gate.StoreKey(strings.Repeat("x", 600), 512), "og-sha256:x", strings.Repeat("k", 512), strings.Repeat("k", 513)}
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		s := newStore(t, openDB(t, d, nil), d)
		for i, k := range keys {
			r := claim(t, s, k, time.Minute)
			if r.Key != k || r.Fence != 1 {
				t.Fatalf("key %d: won record key %.20q fence %d", i, r.Key, r.Fence)
			}
			if ok, err := s.MarkUnknown(ctx, k, r.Fence); err != nil || !ok {
				t.Fatalf("key %d: MarkUnknown = %v, %v", i, ok, err)
			}
			if rec, ok, err := s.Inspect(ctx, k); err != nil || !ok || rec.Key != k || rec.State != gate.StateUnknown {
				t.Fatalf("key %d: Inspect = %.20q %s, %v, %v", i, rec.Key, rec.State, ok, err)
			}
		}
		got, err := s.ListUnresolved(ctx, 0)
		if err != nil || len(got) != len(keys) {
			t.Fatalf("ListUnresolved = %d records, %v; want %d", len(got), err, len(keys))
		}
		seen := map[string]bool{}
		for _, r := range got {
			seen[r.Key] = true
		}
		for i, k := range keys {
			if !seen[k] {
				t.Errorf("key %d (%.20q…) not listed by its own bytes", i, k)
			}
		}
	})
}

// TestStoredTimes checks the stored form: UTC epoch milliseconds, expires_at at
// least lease_expiry + ttl, durations rounded up to whole milliseconds.
func TestStoredTimes(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		s := newStore(t, openDB(t, d, nil), d)
		before := time.Now().UnixMilli()
		res, err := s.Claim(ctx, gate.ClaimRequest{Key: "k", Token: "t", Owner: "o", Lease: 1500*time.Microsecond + time.Minute, TTL: time.Hour + time.Nanosecond})
		if err != nil || res.Status != gate.Won {
			t.Fatalf("claim: %v %v", res.Status, err)
		}
		q := `SELECT lease_expiry, expires_at FROM "` + s.Table() + `"`
		if d == sqlgate.MySQL {
			q = "SELECT lease_expiry, expires_at FROM `" + s.Table() + "`"
		}
		var lease, expires int64
		if err := s.DB().QueryRowContext(ctx, q).Scan(&lease, &expires); err != nil {
			t.Fatal(err)
		}
		after := time.Now().UnixMilli()
		if min := before + 60_002; lease < min-50 || lease > after+60_002+50 {
			t.Fatalf("lease_expiry = %d, want about now + 60002 ms (%d…%d)", lease, min, after+60_002)
		}
		if expires-lease < 3_600_001 {
			t.Fatalf("expires_at - lease_expiry = %d ms, want ≥ 3600001 (the TTL rounded up)", expires-lease)
		}
		if !res.Record.LeaseExpiry.Equal(time.UnixMilli(lease)) || res.Record.LeaseExpiry.Location() != time.UTC {
			t.Fatalf("reported lease_expiry %v, stored %d", res.Record.LeaseExpiry, lease)
		}
	})
}

// TestPurgeLimit deletes expired records in batches and never a live claim, a
// lapsed but unexpired claim, or an unknown record.
func TestPurgeLimit(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		s := newStore(t, openDB(t, d, nil), d)
		for _, k := range []string{"e1", "e2", "e3", "e4", "e5"} {
			r := claim(t, s, k, time.Minute)
			if ok, err := s.Complete(ctx, gate.Completion{Key: k, Fence: r.Fence, TTL: 0}); err != nil || !ok {
				t.Fatal(ok, err)
			}
		}
		claim(t, s, "live", time.Minute)
		claim(t, s, "lapsed", 0)
		u := claim(t, s, "unknown", 0)
		if ok, err := s.MarkUnknown(ctx, "unknown", u.Fence); err != nil || !ok {
			t.Fatal(ok, err)
		}
		for _, want := range []int{2, 2, 1, 0} {
			if n, err := s.Purge(ctx, 2); err != nil || n != want {
				t.Fatalf("Purge(2) = %d, %v; want %d", n, err, want)
			}
		}
		for _, k := range []string{"live", "lapsed", "unknown"} {
			if _, ok, err := s.Inspect(ctx, k); err != nil || !ok {
				t.Fatalf("%s purged: %v %v", k, ok, err)
			}
		}
	})
}

// TestRenewWithinOneMillisecond renews back to back. MySQL reports changed rows,
// not matched ones, so a renewal in the same millisecond as the previous one
// changes nothing; it is still a successful renewal.
func TestRenewWithinOneMillisecond(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		s := newStore(t, openDB(t, d, nil), d)
		r := claim(t, s, "k", time.Minute)
		for i := range 200 {
			if ok, err := s.Renew(ctx, "k", r.Fence, time.Minute, 0); err != nil || !ok {
				t.Fatalf("renewal %d = %v, %v; want true", i, ok, err)
			}
		}
		if ok, err := s.Renew(ctx, "k", r.Fence+1, time.Minute, 0); err != nil || ok {
			t.Fatalf("stale renewal = %v, %v; want false", ok, err)
		}
	})
}

// TestRecordFields checks what a claim stores and reports: owner made valid
// UTF-8 without NUL bytes, fingerprint and result bytes exact, a long token
// still re-affirming its claim.
func TestRecordFields(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		s := newStore(t, openDB(t, d, nil), d)
		tok := strings.Repeat("t", 300)
		req := gate.ClaimRequest{Key: "k", Token: tok, Owner: "host\x00-\xff", Lease: time.Minute, TTL: time.Hour, Fingerprint: []byte{0, 1, 0xff}}
		res, err := s.Claim(ctx, req)
		if err != nil || res.Status != gate.Won || res.Record.ClaimToken != tok {
			t.Fatalf("claim = %v, %v", res.Status, err)
		}
		again, err := s.Claim(ctx, req)
		if err != nil || again.Status != gate.Won || again.Record.Fence != 1 {
			t.Fatalf("re-affirm with a 300-byte token = %v fence %d, %v", again.Status, again.Record.Fence, err)
		}
		rec, _, _ := s.Inspect(ctx, "k")
		if rec.Owner != "host-\uFFFD" || !bytes.Equal(rec.Fingerprint, []byte{0, 1, 0xff}) {
			t.Fatalf("stored owner %q fingerprint %x", rec.Owner, rec.Fingerprint)
		}
		result := []byte("\x00\xffbinary")
		if ok, err := s.Complete(ctx, gate.Completion{Key: "k", Fence: 1, TTL: time.Hour, Result: result}); err != nil || !ok {
			t.Fatal(ok, err)
		}
		if rec, _, _ := s.Inspect(ctx, "k"); !bytes.Equal(rec.Result, result) || rec.DoneAt.IsZero() {
			t.Fatalf("done record result %q done_at %v", rec.Result, rec.DoneAt)
		}
	})
}
