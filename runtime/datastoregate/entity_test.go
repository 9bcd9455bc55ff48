package datastoregate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"github.com/oncegate/oncegate/internal/dsfake"
	"github.com/oncegate/oncegate/runtime/datastoregate"
	"github.com/oncegate/oncegate/runtime/gate"
)

// TestEntityShape checks the stored form: snake_case names, typed values, only
// state and expires_at indexed, expires_at absent on an unknown record.
func TestEntityShape(t *testing.T) {
	f := newFixture(t, nil)
	req := claimReq("k", "tok")
	req.Fingerprint = []byte{1, 2}
	if _, err := f.s.Claim(f.ctx, req); err != nil {
		t.Fatal(err)
	}
	if ok, err := f.s.Complete(f.ctx, gate.Completion{Key: "k", Fence: 1, TTL: time.Hour, Result: []byte("res")}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	now := f.clock.Now()
	want := map[string]struct {
		v       any
		indexed bool
	}{
		"key":          {"k", false},
		"state":        {"done", true},
		"fence":        {int64(1), false},
		"lease_expiry": {now.Add(time.Minute), false},
		"expires_at":   {now.Add(time.Hour), true},
		"done_at":      {now, false},
		"claim_token":  {"tok", false},
		"owner":        {"test", false},
		"fingerprint":  {[]byte{1, 2}, false},
		"result":       {[]byte("res"), false},
	}
	ps := f.raw(t, "k")
	if len(ps) != len(want) {
		t.Errorf("%d properties, want %d: %v", len(ps), len(want), ps)
	}
	for _, p := range ps {
		w, ok := want[p.Name]
		if !ok {
			t.Errorf("unexpected property %q", p.Name)
			continue
		}
		if p.NoIndex == w.indexed {
			t.Errorf("%s: indexed = %v, want %v", p.Name, !p.NoIndex, w.indexed)
		}
		switch wv := w.v.(type) {
		case time.Time:
			if got, ok := p.Value.(time.Time); !ok || !got.Equal(wv) {
				t.Errorf("%s = %#v, want timestamp %v", p.Name, p.Value, wv)
			}
		case []byte:
			if got, ok := p.Value.([]byte); !ok || string(got) != string(wv) {
				t.Errorf("%s = %#v, want %q", p.Name, p.Value, wv)
			}
		default:
			if p.Value != w.v {
				t.Errorf("%s = %#v, want %#v", p.Name, p.Value, w.v)
			}
		}
	}

	r := f.win(t, "u", "t")
	if ok, err := f.s.MarkUnknown(f.ctx, "u", r.Fence); !ok || err != nil {
		t.Fatal(ok, err)
	}
	for _, p := range f.raw(t, "u") {
		if p.Name == "expires_at" {
			t.Fatalf("unknown record has expires_at %v; the TTL policy would delete it", p.Value)
		}
	}
}

// TestKeyNames checks the entity name each record key gets.
func TestKeyNames(t *testing.T) {
	long := strings.Repeat("x", 1501)
	cases := []struct {
		key  string
		name string
	}{
		{"order:1", "order:1"},
		{strings.Repeat("x", 1500), strings.Repeat("x", 1500)},
		{long, gate.StoreKey(long, 1500)},
		{"__reserved__", "og-sha256:"},
		{"bad\xffutf8", "og-sha256:"},
	}
	for _, tc := range cases {
		t.Run(tc.key[:min(len(tc.key), 12)], func(t *testing.T) {
			f := newFixture(t, nil)
			f.win(t, tc.key, "t")
			keys, err := f.c.GetAll(f.ctx, datastore.NewQuery(datastoregate.DefaultKind).KeysOnly(), nil)
			if err != nil || len(keys) != 1 {
				t.Fatalf("keys %v, %v", keys, err)
			}
			if got := keys[0].Name; got != tc.name && !(strings.HasSuffix(tc.name, ":") && strings.HasPrefix(got, tc.name)) {
				t.Fatalf("entity name %.40q, want %.40q", got, tc.name)
			}
			r, ok, err := f.s.Inspect(f.ctx, tc.key)
			if err != nil || !ok || r.Key != tc.key {
				t.Fatalf("Inspect = %.40q, %v, %v; want the original key back", r.Key, ok, err)
			}
		})
	}
}

func TestKindAndNamespace(t *testing.T) {
	f := newFixture(t, nil)
	other, err := datastoregate.New(f.c, &datastoregate.Options{Kind: "Rec", Namespace: "tenant-a", Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	f.win(t, "k", "a")
	if res, err := other.Claim(f.ctx, claimReq("k", "b")); err != nil || res.Status != gate.Won || res.Record.Fence != 1 {
		t.Fatalf("claim in another kind and namespace = %v, %v; want a fresh win", res.Status, err)
	}
	k := datastore.NameKey("Rec", "k", nil)
	k.Namespace = "tenant-a"
	var ps datastore.PropertyList
	if err := f.c.Get(f.ctx, k, &ps); err != nil {
		t.Fatalf("record not stored as Rec in tenant-a: %v", err)
	}
}

func TestOptionsValidation(t *testing.T) {
	srv := dsfake.Start(t)
	c := srv.Client(t, "")
	cases := []struct {
		name  string
		opts  *datastoregate.Options
		field string // "" means valid
	}{
		{"nil", nil, ""},
		{"zero", &datastoregate.Options{}, ""},
		{"reserved kind", &datastoregate.Options{Kind: "__Rec__"}, "Options.Kind"},
		{"long namespace", &datastoregate.Options{Namespace: strings.Repeat("n", 1501)}, "Options.Namespace"},
		{"negative attempts", &datastoregate.Options{MaxAttempts: -1}, "Options.MaxAttempts"},
		{"negative backoff", &datastoregate.Options{RetryBackoff: -time.Second}, "Options.RetryBackoff"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := datastoregate.New(c, tc.opts)
			if (tc.field == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.field)) {
				t.Fatalf("New err = %v, want one naming %q", err, tc.field)
			}
		})
	}
	if _, err := datastoregate.New(nil, nil); err == nil {
		t.Fatal("New(nil client) accepted")
	}
}

func TestOpenWithEmulatorHost(t *testing.T) {
	srv := dsfake.Start(t)
	t.Setenv("DATASTORE_EMULATOR_HOST", srv.Addr())
	ctx := context.Background()
	// The same key in the default database (twice, under both spellings) and in
	// a named one: the second claim must find the first, the third must not.
	want := []struct {
		db     string
		status gate.ClaimStatus
	}{{"", gate.Won}, {"(default)", gate.HeldByOther}, {"named", gate.Won}}
	for _, w := range want {
		s, err := datastoregate.Open(ctx, "p", w.db, nil)
		if err != nil {
			t.Fatalf("Open(%q): %v", w.db, err)
		}
		res, err := s.Claim(ctx, claimReq("k", "token-"+w.db))
		if err != nil || res.Status != w.status {
			t.Fatalf("Open(%q): Claim = %v, %v; want %v", w.db, res.Status, err, w.status)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestResultTooLarge(t *testing.T) {
	f := newFixture(t, nil)
	f.win(t, "k", "t")
	f.srv.ResetCounts()
	ok, err := f.s.Complete(f.ctx, gate.Completion{Key: "k", Fence: 1, TTL: time.Hour, Result: make([]byte, 1<<20)})
	if err == nil || ok {
		t.Fatalf("Complete with a 1 MiB result = %v, %v; want an error", ok, err)
	}
	if n := f.srv.Count(dsfake.MethodCommit); n != 0 {
		t.Fatalf("%d commits sent for a record that cannot fit", n)
	}
}
