package gateenv_test

import (
	"context"
	"errors"
	"testing"

	"github.com/oncegate/oncegate/internal/dsfake"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/sizing"
)

// TestDatastoreMaxClockSkew: ONCEGATE_DATASTORE_MAX_CLOCK_SKEW takes a Go
// duration from 0s to 1m; anything else is refused naming the variable.
func TestDatastoreMaxClockSkew(t *testing.T) {
	srv := dsfake.Start(t)
	t.Setenv("DATASTORE_EMULATOR_HOST", srv.Addr())
	e := valid.With("ONCEGATE_BACKEND", "datastore", "GOOGLE_CLOUD_PROJECT", dsfake.Project)
	for _, v := range []string{"", "0s", "250ms", "1m"} {
		roundTrip(t, e.With(gateenv.EnvDatastoreMaxClockSkew, v))
	}
	for _, v := range []string{"-1s", "2", "61s", "soon"} {
		_, err := gateenv.New(context.Background(), &gateenv.Options{Getenv: e.With(gateenv.EnvDatastoreMaxClockSkew, v).Get})
		var ee *sizing.EnvError
		if !errors.As(err, &ee) || ee.Var != gateenv.EnvDatastoreMaxClockSkew {
			t.Errorf("%q: err = %v", v, err)
		}
	}
}
