package dsfake_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/datastore"
	"google.golang.org/api/iterator"

	"github.com/oncegate/oncegate/internal/dsfake"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// seedQueries stores R/e1…R/e5 with N = i, At = t0 + i h, S = "x" for odd i,
// Multi = {"a", "m<i>"}, plus decoys in another kind and another namespace.
func seedQueries(t *testing.T, c *datastore.Client) {
	t.Helper()
	ctx := context.Background()
	for i := 1; i <= 5; i++ {
		r := &rec{N: int64(i), At: t0.Add(time.Duration(i) * time.Hour), Big: "big", Multi: []string{"a", fmt.Sprint("m", i)}}
		if i%2 == 1 {
			r.S = "x"
		}
		if _, err := c.Put(ctx, datastore.NameKey("R", fmt.Sprint("e", i), nil), r); err != nil {
			t.Fatal(err)
		}
	}
	other := datastore.NameKey("R", "e9", nil)
	other.Namespace = "elsewhere"
	for _, k := range []*datastore.Key{datastore.NameKey("Other", "o1", nil), other} {
		if _, err := c.Put(ctx, k, &rec{N: 1, S: "x", Multi: []string{"a"}}); err != nil {
			t.Fatal(err)
		}
	}
	// An entity of the kind without N: no filter or order on N may return it.
	if _, err := c.Put(ctx, datastore.NameKey("R", "noN", nil), &struct{ S string }{"x"}); err != nil {
		t.Fatal(err)
	}
}

func names(keys []*datastore.Key) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.Name
	}
	return out
}

func TestQueries(t *testing.T) {
	srv := dsfake.Start(t)
	c := srv.Client(t, "")
	seedQueries(t, c)
	q := func() *datastore.Query { return datastore.NewQuery("R") }
	cases := []struct {
		name string
		q    *datastore.Query
		want []string
	}{
		{"kind", q(), []string{"e1", "e2", "e3", "e4", "e5", "noN"}},
		{"timestamp <", q().FilterField("At", "<", t0.Add(3*time.Hour)), []string{"e1", "e2"}},
		{"range", q().FilterField("N", ">=", 2).FilterField("N", "<", 4), []string{"e2", "e3"}},
		{"equality", q().FilterField("S", "=", "x"), []string{"e1", "e3", "e5", "noN"}},
		{"equality on a missing property", q().FilterField("N", "=", 0), nil},
		{"unindexed property", q().FilterField("Big", "=", "big"), nil},
		{"array element", q().FilterField("Multi", "=", "m2"), []string{"e2"}},
		{"!=", q().FilterField("N", "!=", 2), []string{"e1", "e3", "e4", "e5"}},
		{"in", q().FilterField("N", "in", []any{1, 4}), []string{"e1", "e4"}},
		{"not-in", q().FilterField("N", "not-in", []any{1, 4}), []string{"e2", "e3", "e5"}},
		{"type mismatch", q().FilterField("N", ">", "a string"), nil},
		{"or", q().FilterEntity(datastore.OrFilter{Filters: []datastore.EntityFilter{
			datastore.PropertyFilter{FieldName: "N", Operator: "=", Value: 1},
			datastore.PropertyFilter{FieldName: "N", Operator: "=", Value: 5},
		}}), []string{"e1", "e5"}},
		{"order desc", q().Order("-N"), []string{"e5", "e4", "e3", "e2", "e1"}},
		{"order excludes missing", q().Order("N").Limit(2), []string{"e1", "e2"}},
		{"inequality orders by its property", q().FilterField("At", ">", t0.Add(3*time.Hour)).Order("-At"), []string{"e5", "e4"}},
		{"offset and limit", q().Order("N").Offset(1).Limit(2), []string{"e2", "e3"}},
		{"key filter", q().FilterField("__key__", ">", datastore.NameKey("R", "e3", nil)), []string{"e4", "e5", "noN"}},
		{"ancestor", q().Ancestor(datastore.NameKey("R", "e2", nil)), []string{"e2"}},
		{"namespace", q().Namespace("elsewhere"), []string{"e9"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			keys, err := c.GetAll(context.Background(), tc.q.KeysOnly(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(keys); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestQueryFullEntitiesAndCursor(t *testing.T) {
	srv := dsfake.Start(t)
	c := srv.Client(t, "")
	seedQueries(t, c)
	ctx := context.Background()
	it := c.Run(ctx, datastore.NewQuery("R").Order("N").Limit(2))
	var got []rec
	for {
		var r rec
		_, err := it.Next(&r)
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if len(got) != 2 || got[0].N != 1 || got[1].N != 2 || got[1].Big != "big" || !got[1].At.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("first page = %+v", got)
	}
	cur, err := it.Cursor()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := c.GetAll(ctx, datastore.NewQuery("R").Order("N").Start(cur).KeysOnly(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"e3", "e4", "e5"}; !slices.Equal(names(keys), want) {
		t.Errorf("after cursor: %v, want %v", names(keys), want)
	}
}

func TestQueryPaging(t *testing.T) {
	srv := dsfake.Start(t)
	c := srv.Client(t, "")
	ctx := context.Background()
	const n = 1200
	keys := make([]*datastore.Key, n)
	vals := make([]rec, n)
	for i := range keys {
		keys[i] = datastore.IDKey("P", int64(i+1), nil)
		vals[i] = rec{N: int64(i)}
	}
	for i := 0; i < n; i += 500 {
		if _, err := c.PutMulti(ctx, keys[i:min(i+500, n)], vals[i:min(i+500, n)]); err != nil {
			t.Fatal(err)
		}
	}
	srv.ResetCounts()
	got, err := c.GetAll(ctx, datastore.NewQuery("P").KeysOnly(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || got[0].ID != 1 || got[n-1].ID != n {
		t.Fatalf("got %d keys (%v … %v), want %d in id order", len(got), got[0], got[len(got)-1], n)
	}
	if calls := srv.Count(dsfake.MethodRunQuery); calls != 3 {
		t.Errorf("%d RunQuery calls, want 3 batches", calls)
	}
}

func TestTimestampsStoredToTheMicrosecond(t *testing.T) {
	srv := dsfake.Start(t)
	c := srv.Client(t, "")
	ctx := context.Background()
	k := datastore.NameKey("K", "a", nil)
	at := t0.Add(1234567 * time.Nanosecond)
	if _, err := c.Put(ctx, k, &rec{At: at}); err != nil {
		t.Fatal(err)
	}
	var got rec
	if err := c.Get(ctx, k, &got); err != nil {
		t.Fatal(err)
	}
	if want := at.Truncate(time.Microsecond); !got.At.Equal(want) {
		t.Errorf("At = %v, want %v", got.At, want)
	}
}
