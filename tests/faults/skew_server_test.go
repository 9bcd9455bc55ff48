package faults_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/dlock"
	"github.com/oncegate/oncegate/runtime/gate"
)

// TestBackendPortCarriesNoClientTime: nothing a gateway sends its backend holds
// a point in time, only durations, so a server-clock backend has nothing of the
// client's clock to be misled by. It walks every method of every backend
// interface of the gate package.
func TestBackendPortCarriesNoClientTime(t *testing.T) {
	timeType := reflect.TypeFor[time.Time]()
	var holdsTime func(reflect.Type, map[reflect.Type]bool) bool
	holdsTime = func(ty reflect.Type, seen map[reflect.Type]bool) bool {
		if ty == timeType {
			return true
		}
		if seen[ty] {
			return false
		}
		seen[ty] = true
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			return holdsTime(ty.Elem(), seen)
		case reflect.Struct:
			for i := range ty.NumField() {
				if holdsTime(ty.Field(i).Type, seen) {
					return true
				}
			}
		}
		return false
	}
	ports := []reflect.Type{
		reflect.TypeFor[gate.Backend](), reflect.TypeFor[gate.Admin](),
	}
	methods := 0
	for _, p := range ports {
		for i := range p.NumMethod() {
			m := p.Method(i)
			methods++
			for j := range m.Type.NumIn() {
				if holdsTime(m.Type.In(j), map[reflect.Type]bool{}) {
					t.Errorf("%s.%s takes a %s holding a time.Time: the client's clock would reach the store", p.Name(), m.Name, m.Type.In(j))
				}
			}
		}
	}
	if methods < 11 {
		t.Fatalf("walked %d methods; the port has more", methods)
	}
}

// TestServerClockBackendsReadNoClientClock: the Redis and SQL backends never
// read the process clock (no time.Now, time.Since or time.Until in their
// source): every lease and expiry is computed by the server.
func TestServerClockBackendsReadNoClientClock(t *testing.T) {
	_, here, _, _ := runtime.Caller(0)
	for _, pkg := range []string{"redisgate", "sqlgate"} {
		dir := filepath.Join(filepath.Dir(here), "..", "..", "runtime", pkg)
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no sources in %s: %v", dir, err)
		}
		for _, name := range files {
			// stopwatch.go times a MySQL INSERT on the monotonic clock to learn
			// whether it waited on a lock; the duration never reaches a record.
			if strings.HasSuffix(name, "_test.go") || (pkg == "sqlgate" && filepath.Base(name) == "stopwatch.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			timePkg := ""
			for _, imp := range f.Imports {
				if imp.Path.Value == `"time"` {
					timePkg = "time"
					if imp.Name != nil {
						timePkg = imp.Name.Name
					}
				}
			}
			if timePkg == "" {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == timePkg {
					switch sel.Sel.Name {
					case "Now", "Since", "Until":
						t.Errorf("%s: %s reads the process clock (%s.%s)", pkg, fset.Position(sel.Pos()), timePkg, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}

// TestClockSkewServerClock: on Redis and PostgreSQL, lock clients whose clocks
// are 30 s ahead and 30 s behind (dlock.Options.Now, the only client clock a
// lock has) neither take a held lock early nor write a lease that ends early:
// the server sets and judges every lease. Only the client-side queries of a
// backend that is not a dlock.Clock (sqlgate) shift with the skew.
func TestClockSkewServerClock(t *testing.T) {
	const skew = 30 * time.Second
	const lease = 2 * time.Second
	backends := []struct {
		name string
		make func(t *testing.T) gate.Backend
	}{
		{"redis", func(t *testing.T) gate.Backend {
			prefix := testenv.UniqueName(t, "skew") + ":"
			t.Cleanup(func() { deleteRedisPrefix(t, testenv.Redis(t), prefix) })
			return redisStore(t, testenv.Redis(t), prefix)
		}},
		{"postgres", func(t *testing.T) gate.Backend {
			dsn, direct := postgresVia(t, "")
			return sqlStore(t, dsn, direct, testenv.UniqueName(t, "skew"))
		}},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			store := b.make(t)
			_, storeClock := store.(dlock.Clock)
			client := func(offset time.Duration) *dlock.Client {
				c, err := dlock.New(store, &dlock.Options{Lease: lease, TTL: time.Hour,
					Now: func() time.Time { return time.Now().Add(offset) }})
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			ctx := context.Background()
			honest, ahead, behind := client(0), client(skew), client(-skew)
			f := figures{Class: "client clock skew ±30 s", Backend: b.name, Messages: 1, Injected: 2}
			refused := func(c *dlock.Client, who string) {
				t.Helper()
				f.Tried++
				if l, err := c.Acquire(ctx, "k", who); !errors.Is(err, dlock.ErrLocked) {
					t.Fatalf("%s acquired a held lock: %v, %v", who, l, err)
				}
			}
			l1, err := honest.Acquire(ctx, "k", "honest")
			if err != nil {
				t.Fatal(err)
			}
			refused(ahead, "ahead")
			refused(behind, "behind")
			locked, err := ahead.IsLocked(ctx, "k")
			if err != nil || locked != storeClock {
				t.Fatalf("IsLocked by the client 30 s ahead = %v, %v; want %v (only a store clock keeps queries exact)", locked, err, storeClock)
			}
			if ok, err := l1.Release(ctx); !ok || err != nil {
				t.Fatal(ok, err)
			}
			// A holder 30 s behind writes a lease that the server starts now.
			f.Tried++
			l2, err := behind.Acquire(ctx, "k", "behind")
			if err != nil {
				t.Fatal(err)
			}
			refused(honest, "honest")
			refused(ahead, "ahead")
			start := time.Now()
			f.Tried++
			l3, err := ahead.AcquireWait(ctx, "k", "ahead")
			if err != nil {
				t.Fatal(err)
			}
			if waited := time.Since(start); waited < lease-500*time.Millisecond {
				t.Errorf("the client 30 s ahead took the lock after %s; the lease is %s", waited, lease)
			}
			if l3.Token() <= l2.Token() || l2.Token() <= l1.Token() {
				t.Errorf("tokens %d, %d, %d; want increasing", l1.Token(), l2.Token(), l3.Token())
			}
			f.Processed = 1
			f.Note = "held locks refused to clients 30 s ahead and behind; a lease written by the client behind lasted its full length"
			if !storeClock {
				f.Note += "; IsLocked by the client ahead shifted (sqlgate is not a dlock.Clock)"
			}
			report(t, f)
		})
	}
}
