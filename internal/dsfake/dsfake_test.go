package dsfake_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/datastore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/oncegate/oncegate/internal/dsfake"
)

type rec struct {
	N     int64
	S     string
	Big   string `datastore:",noindex"`
	At    time.Time
	Multi []string
}

func TestPutGetAcrossPartitions(t *testing.T) {
	srv := dsfake.Start(t)
	ctx := context.Background()
	def, named := srv.Client(t, ""), srv.Client(t, "other-db")

	k := datastore.NameKey("K", "a", nil)
	nsk := datastore.NameKey("K", "a", nil)
	nsk.Namespace = "ns1"
	puts := []struct {
		c *datastore.Client
		k *datastore.Key
		n int64
	}{{def, k, 1}, {def, nsk, 2}, {named, k, 3}}
	for _, p := range puts {
		if _, err := p.c.Put(ctx, p.k, &rec{N: p.n}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range puts {
		var got rec
		if err := p.c.Get(ctx, p.k, &got); err != nil {
			t.Fatal(err)
		}
		if got.N != p.n {
			t.Errorf("%v: N = %d, want %d (partitions leak)", p.k, got.N, p.n)
		}
	}
	if err := def.Get(ctx, datastore.NameKey("K", "b", nil), &rec{}); !errors.Is(err, datastore.ErrNoSuchEntity) {
		t.Errorf("missing key: err = %v, want ErrNoSuchEntity", err)
	}
	if err := def.Delete(ctx, k); err != nil {
		t.Fatal(err)
	}
	if err := def.Get(ctx, k, &rec{}); !errors.Is(err, datastore.ErrNoSuchEntity) {
		t.Errorf("after delete: err = %v, want ErrNoSuchEntity", err)
	}
	if srv.Len() != 2 {
		t.Errorf("Len = %d, want 2", srv.Len())
	}
}

func TestIncompleteKeyGetsID(t *testing.T) {
	srv := dsfake.Start(t)
	c := srv.Client(t, "")
	k, err := c.Put(context.Background(), datastore.IncompleteKey("K", nil), &rec{N: 7})
	if err != nil {
		t.Fatal(err)
	}
	if k.ID == 0 {
		t.Fatalf("key %v has no id", k)
	}
	var got rec
	if err := c.Get(context.Background(), k, &got); err != nil || got.N != 7 {
		t.Fatalf("Get = %+v, %v", got, err)
	}
}

func TestBeginLaterTakesTwoRPCs(t *testing.T) {
	srv := dsfake.Start(t)
	c := srv.Client(t, "")
	ctx := context.Background()
	k := datastore.NameKey("K", "a", nil)
	tx, err := c.NewTransaction(ctx, datastore.BeginLater)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Get(k, &rec{}); !errors.Is(err, datastore.ErrNoSuchEntity) {
		t.Fatalf("Get: %v", err)
	}
	if _, err := tx.Put(k, &rec{N: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{dsfake.MethodLookup: 1, dsfake.MethodCommit: 1}
	got := srv.Counts()
	if len(got) != len(want) || got[dsfake.MethodLookup] != 1 || got[dsfake.MethodCommit] != 1 {
		t.Errorf("Counts = %v, want %v", got, want)
	}
}

// TestSerializable checks every way a transaction's commit must abort, and that
// an untouched transaction commits.
func TestSerializable(t *testing.T) {
	k := datastore.NameKey("K", "a", nil)
	cases := []struct {
		name     string
		seed     bool // k exists before the transaction
		read     bool // the transaction reads k
		interfer func(ctx context.Context, c *datastore.Client) error
		abort    bool
	}{
		{"read then changed", true, true, func(ctx context.Context, c *datastore.Client) error {
			_, err := c.Put(ctx, k, &rec{N: 9})
			return err
		}, true},
		{"read missing then inserted", false, true, func(ctx context.Context, c *datastore.Client) error {
			_, err := c.Put(ctx, k, &rec{N: 9})
			return err
		}, true},
		{"read then deleted", true, true, func(ctx context.Context, c *datastore.Client) error {
			return c.Delete(ctx, k)
		}, true},
		{"blind write after other write commits", true, false, func(ctx context.Context, c *datastore.Client) error {
			_, err := c.Put(ctx, k, &rec{N: 9})
			return err
		}, false},
		{"other key changed", true, true, func(ctx context.Context, c *datastore.Client) error {
			_, err := c.Put(ctx, datastore.NameKey("K", "b", nil), &rec{N: 9})
			return err
		}, false},
		{"no interference", true, true, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := dsfake.Start(t)
			c := srv.Client(t, "")
			ctx := context.Background()
			if tc.seed {
				if _, err := c.Put(ctx, k, &rec{N: 1}); err != nil {
					t.Fatal(err)
				}
			}
			tx, err := c.NewTransaction(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.read {
				if err := tx.Get(k, &rec{}); err != nil && !errors.Is(err, datastore.ErrNoSuchEntity) {
					t.Fatal(err)
				}
			}
			if tc.interfer != nil {
				if err := tc.interfer(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := tx.Put(k, &rec{N: 2}); err != nil {
				t.Fatal(err)
			}
			_, err = tx.Commit()
			if tc.abort != errors.Is(err, datastore.ErrConcurrentTransaction) {
				t.Fatalf("Commit err = %v, want aborted %v", err, tc.abort)
			}
			if tc.abort {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Commit(); status.Code(err) != codes.InvalidArgument && err == nil {
				t.Errorf("second commit of a finished transaction: err = %v", err)
			}
		})
	}
}

func TestQueryInTransactionConflicts(t *testing.T) {
	srv := dsfake.Start(t)
	c := srv.Client(t, "")
	ctx := context.Background()
	k := datastore.NameKey("K", "a", nil)
	if _, err := c.Put(ctx, k, &rec{N: 1, S: "x"}); err != nil {
		t.Fatal(err)
	}
	tx, err := c.NewTransaction(ctx, datastore.BeginLater)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := c.GetAll(ctx, datastore.NewQuery("K").FilterField("S", "=", "x").KeysOnly().Transaction(tx), nil)
	if err != nil || len(keys) != 1 {
		t.Fatalf("query in transaction: %v, %v", keys, err)
	}
	if _, err := c.Put(ctx, k, &rec{N: 2, S: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Delete(k); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(); !errors.Is(err, datastore.ErrConcurrentTransaction) {
		t.Fatalf("Commit err = %v, want aborted", err)
	}
}

func TestLimits(t *testing.T) {
	srv := dsfake.Start(t)
	c := srv.Client(t, "")
	ctx := context.Background()
	long := strings.Repeat("x", 1501)
	cases := []struct {
		name string
		key  *datastore.Key
		v    *rec
		ok   bool
	}{
		{"long key name", datastore.NameKey("K", long, nil), &rec{}, false},
		{"1500-byte key name", datastore.NameKey("K", long[:1500], nil), &rec{}, true},
		{"reserved key name", datastore.NameKey("K", "__x__", nil), &rec{}, false},
		{"reserved kind", datastore.NameKey("__K__", "a", nil), &rec{}, false},
		{"long unindexed string", datastore.NameKey("K", "a", nil), &rec{Big: long}, true},
		{"entity over 1 MiB", datastore.NameKey("K", "a", nil), &rec{Big: strings.Repeat("x", 1<<20)}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Put(ctx, tc.key, tc.v)
			if tc.ok != (err == nil) {
				t.Fatalf("Put err = %v, want ok %v", err, tc.ok)
			}
			if !tc.ok && status.Code(err) != codes.InvalidArgument {
				// The service, not the client library, refused it.
				t.Errorf("code = %v, want InvalidArgument (%v)", status.Code(err), err)
			}
		})
	}
}

// TestEmulatorHost checks the fake serves a client configured only through
// DATASTORE_EMULATOR_HOST, as a worker process started by a test would be.
func TestEmulatorHost(t *testing.T) {
	srv := dsfake.Start(t)
	t.Setenv("DATASTORE_EMULATOR_HOST", srv.Addr())
	ctx := context.Background()
	c, err := datastore.NewClient(ctx, "emulated")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	k := datastore.NameKey("K", "a", nil)
	if _, err := c.Put(ctx, k, &rec{N: 4}); err != nil {
		t.Fatal(err)
	}
	var got rec
	if err := c.Get(ctx, k, &got); err != nil || got.N != 4 {
		t.Fatalf("Get = %+v, %v", got, err)
	}
}
