package dsfake_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/datastore"
	"google.golang.org/grpc/status"

	"github.com/oncegate/oncegate/internal/dsfake"
	"github.com/oncegate/oncegate/internal/emulator"
	"github.com/oncegate/oncegate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// record is an entity shaped like a datastoregate record.
type record struct {
	State     string    `datastore:"state"`
	ExpiresAt time.Time `datastore:"expires_at"`
	Fence     int64     `datastore:"fence,noindex"`
	Owner     string    `datastore:"owner,noindex"`
	Result    []byte    `datastore:"result,noindex"`
}

// step is one scripted call sequence; it returns what it saw, as text.
type step struct {
	name string
	run  func(ctx context.Context, c *datastore.Client, ns string) string
}

// answer renders an error as its gRPC code (or the client's sentinel), the part of
// an answer both servers must agree on; messages may differ.
func answer(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, datastore.ErrNoSuchEntity):
		return "no such entity"
	case errors.Is(err, datastore.ErrConcurrentTransaction):
		return "concurrent transaction"
	}
	var me datastore.MultiError
	if errors.As(err, &me) {
		parts := make([]string, len(me))
		for i, e := range me {
			parts[i] = answer(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	if s, ok := status.FromError(err); ok {
		return s.Code().String()
	}
	// The client wraps gRPC errors it gets inside a transaction.
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return se.GRPCStatus().Code().String()
	}
	return "error: " + err.Error()
}

var cmpT0 = time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)

func key(ns, name string) *datastore.Key {
	k := datastore.NameKey("Record", name, nil)
	k.Namespace = ns
	return k
}

func put(ctx context.Context, c *datastore.Client, ns, name string, r record) error {
	_, err := c.Put(ctx, key(ns, name), &r)
	return err
}

func query(ctx context.Context, c *datastore.Client, q *datastore.Query) string {
	keys, err := c.GetAll(ctx, q.KeysOnly(), nil)
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Name
	}
	return fmt.Sprintf("%v %s", names, answer(err))
}

// script is what datastoregate does to a Datastore, call by call.
var script = []step{
	{"lookup missing", func(ctx context.Context, c *datastore.Client, ns string) string {
		var r record
		return answer(c.Get(ctx, key(ns, "absent"), &r))
	}},
	{"put then lookup keeps microseconds", func(ctx context.Context, c *datastore.Client, ns string) string {
		in := record{State: "done", ExpiresAt: cmpT0, Fence: 3, Owner: "w1", Result: []byte{0, 1, 2}}
		if err := put(ctx, c, ns, "a", in); err != nil {
			return answer(err)
		}
		var out record
		err := c.Get(ctx, key(ns, "a"), &out)
		return fmt.Sprintf("%s %s %s %d %s %v", answer(err), out.State, out.ExpiresAt.UTC().Format(time.RFC3339Nano), out.Fence, out.Owner, out.Result)
	}},
	{"lookup many, one missing", func(ctx context.Context, c *datastore.Client, ns string) string {
		rs := make([]record, 2)
		return answer(c.GetMulti(ctx, []*datastore.Key{key(ns, "a"), key(ns, "absent")}, rs))
	}},
	{"begin-later transaction creates", func(ctx context.Context, c *datastore.Client, ns string) string {
		_, err := c.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
			var r record
			if err := tx.Get(key(ns, "b"), &r); !errors.Is(err, datastore.ErrNoSuchEntity) {
				return fmt.Errorf("lookup in transaction: %v", err)
			}
			_, err := tx.Put(key(ns, "b"), &record{State: "pending", ExpiresAt: cmpT0.Add(time.Hour), Fence: 1})
			return err
		}, datastore.BeginLater, datastore.MaxAttempts(1))
		return answer(err)
	}},
	{"read conflict aborts the later commit", func(ctx context.Context, c *datastore.Client, ns string) string {
		tx1, err := c.NewTransaction(ctx, datastore.BeginLater)
		if err != nil {
			return answer(err)
		}
		var r record
		e1 := tx1.Get(key(ns, "b"), &r)
		_, e2 := c.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
			var r record
			if err := tx.Get(key(ns, "b"), &r); err != nil {
				return err
			}
			r.Fence++
			_, err := tx.Put(key(ns, "b"), &r)
			return err
		}, datastore.BeginLater, datastore.MaxAttempts(1))
		_, e3 := tx1.Put(key(ns, "b"), &record{State: "done", Fence: 9})
		_, e4 := tx1.Commit()
		return fmt.Sprintf("read %s, other %s, put %s, commit %s", answer(e1), answer(e2), answer(e3), answer(e4))
	}},
	{"blind write after a concurrent commit", func(ctx context.Context, c *datastore.Client, ns string) string {
		tx1, err := c.NewTransaction(ctx)
		if err != nil {
			return answer(err)
		}
		e1 := put(ctx, c, ns, "c", record{State: "pending"})
		_, e2 := tx1.Put(key(ns, "c"), &record{State: "done"})
		_, e3 := tx1.Commit()
		var r record
		e4 := c.Get(ctx, key(ns, "c"), &r)
		return fmt.Sprintf("other %s, put %s, commit %s, state %s %s", answer(e1), answer(e2), answer(e3), r.State, answer(e4))
	}},
	{"committed transaction cannot be reused", func(ctx context.Context, c *datastore.Client, ns string) string {
		tx, err := c.NewTransaction(ctx)
		if err != nil {
			return answer(err)
		}
		_, e1 := tx.Put(key(ns, "d"), &record{State: "pending"})
		_, e2 := tx.Commit()
		_, e3 := tx.Commit()
		return fmt.Sprintf("put %s, commit %s, again %s", answer(e1), answer(e2), answer(e3))
	}},
	{"rolled back transaction writes nothing", func(ctx context.Context, c *datastore.Client, ns string) string {
		tx, err := c.NewTransaction(ctx, datastore.BeginLater)
		if err != nil {
			return answer(err)
		}
		var r record
		e1 := tx.Get(key(ns, "e"), &r)
		_, e2 := tx.Put(key(ns, "e"), &record{State: "pending"})
		e3 := tx.Rollback()
		e4 := c.Get(ctx, key(ns, "e"), &r)
		return fmt.Sprintf("lookup %s, put %s, rollback %s, after %s", answer(e1), answer(e2), answer(e3), answer(e4))
	}},
	{"read-only transaction", func(ctx context.Context, c *datastore.Client, ns string) string {
		tx, err := c.NewTransaction(ctx, datastore.ReadOnly)
		if err != nil {
			return answer(err)
		}
		var r record
		e1 := tx.Get(key(ns, "a"), &r)
		_, e2 := tx.Commit()
		return fmt.Sprintf("lookup %s %s, commit %s", answer(e1), r.State, answer(e2))
	}},
	{"query expires_at before, ordered", func(ctx context.Context, c *datastore.Client, ns string) string {
		for i, name := range []string{"q3", "q1", "q2"} {
			if err := put(ctx, c, ns, name, record{State: "done", ExpiresAt: cmpT0.Add(time.Duration(i) * time.Minute)}); err != nil {
				return answer(err)
			}
		}
		q := datastore.NewQuery("Record").Namespace(ns).FilterField("expires_at", "<", cmpT0.Add(90*time.Second)).Order("expires_at")
		return query(ctx, c, q)
	}},
	{"query expires_at with limit", func(ctx context.Context, c *datastore.Client, ns string) string {
		q := datastore.NewQuery("Record").Namespace(ns).FilterField("expires_at", "<=", cmpT0.Add(time.Hour)).Order("expires_at").Limit(2)
		return query(ctx, c, q)
	}},
	{"query on state", func(ctx context.Context, c *datastore.Client, ns string) string {
		q := datastore.NewQuery("Record").Namespace(ns).FilterField("state", "=", "pending")
		return query(ctx, c, q)
	}},
	{"query on an unindexed property finds nothing", func(ctx context.Context, c *datastore.Client, ns string) string {
		q := datastore.NewQuery("Record").Namespace(ns).FilterField("fence", "=", int64(3))
		return query(ctx, c, q)
	}},
	{"delete, lookup, delete missing", func(ctx context.Context, c *datastore.Client, ns string) string {
		e1 := c.Delete(ctx, key(ns, "a"))
		var r record
		e2 := c.Get(ctx, key(ns, "a"), &r)
		e3 := c.Delete(ctx, key(ns, "a"))
		return fmt.Sprintf("delete %s, lookup %s, again %s", answer(e1), answer(e2), answer(e3))
	}},
	{"delete in a transaction after lookup", func(ctx context.Context, c *datastore.Client, ns string) string {
		_, err := c.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
			var r record
			if err := tx.Get(key(ns, "q1"), &r); err != nil {
				return err
			}
			return tx.Delete(key(ns, "q1"))
		}, datastore.BeginLater, datastore.MaxAttempts(1))
		var r record
		return fmt.Sprintf("%s, after %s", answer(err), answer(c.Get(ctx, key(ns, "q1"), &r)))
	}},
	{"key name over 1500 bytes", func(ctx context.Context, c *datastore.Client, ns string) string {
		return answer(put(ctx, c, ns, strings.Repeat("k", 1501), record{State: "x"}))
	}},
	{"reserved key name", func(ctx context.Context, c *datastore.Client, ns string) string {
		return answer(put(ctx, c, ns, "__x__", record{State: "x"}))
	}},
	{"indexed string over 1500 bytes", func(ctx context.Context, c *datastore.Client, ns string) string {
		return answer(put(ctx, c, ns, "long", record{State: strings.Repeat("s", 1501)}))
	}},
}

// transcript runs the script on c in a fresh namespace.
func transcript(t *testing.T, c *datastore.Client) []string {
	ns := testenv.UniqueName(t, "compare")
	ctx := t.Context()
	out := make([]string, len(script))
	for i, s := range script {
		out[i] = s.run(ctx, c, ns)
	}
	return out
}

// TestFakeMatchesEmulator runs the same scripted sequence of Datastore calls — the
// lookups, begin-later and read-only transactions, conflicting commits, expires_at
// and state queries, deletes and limits datastoregate relies on — against the fake
// and the Datastore emulator (in both its modes), and compares the answers step by
// step. The package
// doc lists the differences it found.
func TestFakeMatchesEmulator(t *testing.T) {
	for _, mode := range []struct {
		name string
		host func(testing.TB) string
	}{
		{"datastore-mode", testenv.DatastoreEmulator},
		{"firestore-mode", testenv.DatastoreEmulatorFirestoreMode},
	} {
		t.Run(mode.name, func(t *testing.T) { compareWithEmulator(t, mode.host(t)) })
	}
}

// compareWithEmulator runs the script on a fresh fake and on the emulator at host.
func compareWithEmulator(t *testing.T, host string) {
	ec, err := datastore.NewClient(t.Context(), dsfake.Project, emulator.ClientOptions(host)...)
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	fake := transcript(t, dsfake.Start(t).Client(t, ""))
	emu := transcript(t, ec)
	for i, s := range script {
		t.Logf("%-45s %s", s.name, fake[i])
		if fake[i] != emu[i] {
			t.Errorf("%s:\n  fake:     %s\n  emulator: %s", s.name, fake[i], emu[i])
		}
	}
}
