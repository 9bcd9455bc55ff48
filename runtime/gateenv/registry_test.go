package gateenv_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/sizing"
)

// TestBackendNotLinked: an ONCEGATE_BACKEND naming a backend of this module
// that the program did not link is refused, by New and NewAdmin, with a
// *sizing.EnvError naming the variable and a message naming the package to
// import; a name no package offers lists only the linked backends.
func TestBackendNotLinked(t *testing.T) {
	memoryOnly := map[string]gateenv.Opener{"memory": gateenv.OpenMemory}
	for _, tt := range []struct {
		backend string
		want    []string // in the message
		notWant string
	}{
		{"sql", []string{`ONCEGATE_BACKEND="sql"`, "not linked", `import _ "github.com/oncegate/oncegate/runtime/gateenv/sqlenv"`, "github.com/oncegate/oncegate/runtime/gateenv/allbackends", "linked: memory"}, ""},
		{"redis", []string{`ONCEGATE_BACKEND="redis"`, "not linked", `import _ "github.com/oncegate/oncegate/runtime/gateenv/redisenv"`, "github.com/oncegate/oncegate/runtime/gateenv/allbackends"}, ""},
		{"datastore", []string{`ONCEGATE_BACKEND="datastore"`, "not linked", `import _ "github.com/oncegate/oncegate/runtime/gateenv/datastoreenv"`, "github.com/oncegate/oncegate/runtime/gateenv/allbackends"}, ""},
		{"oracle", []string{`ONCEGATE_BACKEND="oracle" is malformed; want one of memory`}, "not linked"},
		{"", []string{"ONCEGATE_BACKEND is not set; want one of memory"}, "not linked"},
	} {
		e := valid.With("ONCEGATE_BACKEND", tt.backend)
		for fn, open := range map[string]func() error{
			"New": func() error {
				_, err := gateenv.New(context.Background(), &gateenv.Options{Getenv: e.Get, Backends: memoryOnly})
				return err
			},
			"NewAdmin": func() error {
				_, err := gateenv.NewAdmin(context.Background(), &gateenv.Options{Getenv: e.Get, Backends: memoryOnly})
				return err
			},
		} {
			err := open()
			var ee *sizing.EnvError
			if !errors.As(err, &ee) || ee.Var != gateenv.EnvBackend {
				t.Errorf("%s, backend %q: err = %v, want a *sizing.EnvError naming %s", fn, tt.backend, err, gateenv.EnvBackend)
				continue
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s, backend %q: error %q does not say %q", fn, tt.backend, err, w)
				}
			}
			if tt.notWant != "" && strings.Contains(err.Error(), tt.notWant) {
				t.Errorf("%s, backend %q: error %q says %q", fn, tt.backend, err, tt.notWant)
			}
		}
	}
}

// TestLinkedBackends: the packages this test binary imports (allbackends, in
// main_test.go) registered sql, redis and datastore beside memory.
func TestLinkedBackends(t *testing.T) {
	reg := gateenv.Backends()
	for _, name := range []string{"memory", "sql", "redis", "datastore"} {
		if reg[name] == nil {
			t.Errorf("Backends() has no %q: %v", name, reg)
		}
	}
}

var registered atomic.Int64

// TestRegister: a registered opener serves ONCEGATE_BACKEND=name; Backends
// returns a copy the caller may change; a second registration of a name, an
// empty name and a nil opener panic.
func TestRegister(t *testing.T) {
	name := fmt.Sprintf("registered-%d", registered.Add(1)) // unique under -count
	f := &fakeOpener{}
	gateenv.Register(name, f.open)
	c, err := gateenv.New(context.Background(), &gateenv.Options{Getenv: valid.With("ONCEGATE_BACKEND", name).Get})
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	if f.opened != 1 || f.closed != 1 {
		t.Errorf("opened %d, closed %d; want 1, 1", f.opened, f.closed)
	}
	reg := gateenv.Backends()
	delete(reg, name)
	if gateenv.Backends()[name] == nil {
		t.Error("deleting from Backends()'s map unregistered the backend")
	}
	for what, call := range map[string]func(){
		"twice":      func() { gateenv.Register(name, f.open) },
		"empty name": func() { gateenv.Register("", f.open) },
		"nil opener": func() { gateenv.Register(name+"-nil", nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register %s did not panic", what)
				}
			}()
			call()
		}()
	}
}

// TestNilOpenerInBackends: a Backends map whose entry for the chosen backend
// is nil (reg["sql"] = nil, a natural way to take a backend out of a copy of
// Backends()) is refused as a backend that is not linked, by New and
// NewAdmin, instead of calling the nil opener.
func TestNilOpenerInBackends(t *testing.T) {
	reg := gateenv.Backends()
	reg["sql"] = nil
	reg["custom"] = nil
	for _, name := range []string{"sql", "custom"} {
		e := valid.With("ONCEGATE_BACKEND", name)
		for fn, open := range map[string]func() error{
			"New": func() error {
				_, err := gateenv.New(context.Background(), &gateenv.Options{Getenv: e.Get, Backends: reg})
				return err
			},
			"NewAdmin": func() error {
				_, err := gateenv.NewAdmin(context.Background(), &gateenv.Options{Getenv: e.Get, Backends: reg})
				return err
			},
		} {
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("%s, backend %q with a nil opener panicked: %v", fn, name, p)
					}
				}()
				err = open()
			}()
			var ee *sizing.EnvError
			if !errors.As(err, &ee) || ee.Var != gateenv.EnvBackend || strings.Contains(ee.Want, name) {
				t.Errorf("%s, backend %q with a nil opener: err = %v, want a *sizing.EnvError naming %s that does not list it as linked", fn, name, err, gateenv.EnvBackend)
			}
		}
	}
}
