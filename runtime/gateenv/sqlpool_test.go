package gateenv_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/sqlgate"
	"github.com/oncegate/oncegate/sizing"
)

// TestSQLMaxConns: ONCEGATE_SQL_MAX_CONNS bounds the pool, its absence gives
// sqlgate.DefaultMaxConns, and a value that is not a whole number from 1 is
// refused naming the variable.
func TestSQLMaxConns(t *testing.T) {
	e := valid.With("ONCEGATE_BACKEND", "sql", "ONCEGATE_SQL_DSN", "sqlite:"+filepath.Join(t.TempDir(), "p.db"))
	for _, tt := range []struct {
		value string
		want  int
	}{{"7", 7}, {"", sqlgate.DefaultMaxConns()}} {
		c := roundTrip(t, e.With(gateenv.EnvSQLMaxConns, tt.value))
		if got := c.Backend.(*sqlgate.Store).DB().Stats().MaxOpenConnections; got != tt.want {
			t.Errorf("%s=%q: pool bound %d, want %d", gateenv.EnvSQLMaxConns, tt.value, got, tt.want)
		}
	}
	for _, v := range []string{"0", "-3", "ten", "1.5", "100000"} {
		_, err := gateenv.New(context.Background(), &gateenv.Options{Getenv: e.With(gateenv.EnvSQLMaxConns, v).Get})
		var ee *sizing.EnvError
		if !errors.As(err, &ee) || ee.Var != gateenv.EnvSQLMaxConns {
			t.Errorf("%s=%q: err = %v", gateenv.EnvSQLMaxConns, v, err)
		}
	}
}
