// Package datastoreenv links the datastore backend (runtime/datastoregate over
// Firestore in Datastore mode) into gateenv. A program that runs with
// ONCEGATE_BACKEND=datastore imports it for its side effect,
//
//	import _ "github.com/oncegate/oncegate/runtime/gateenv/datastoreenv"
//
// as a database/sql driver is imported; its init registers Open as
// "datastore".
package datastoreenv

import (
	"context"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"github.com/oncegate/oncegate/runtime/datastoregate"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/sizing"
)

func init() { gateenv.Register("datastore", Open) }

// Open is the datastore backend's gateenv.Opener. It opens Firestore in
// Datastore mode for GOOGLE_CLOUD_PROJECT and ONCEGATE_DATASTORE_DATABASE
// (empty or "(default)": the default database) with
// datastore.NewClientWithDatabase, storing records under
// ONCEGATE_DATASTORE_KIND (empty: datastoregate.DefaultKind), leases judged
// with a margin of ONCEGATE_DATASTORE_MAX_CLOCK_SKEW (empty:
// datastoregate.DefaultMaxClockSkew). The client honours
// DATASTORE_EMULATOR_HOST. A missing project, a skew that is not a Go duration
// from 0s to 1m, or a reserved kind is a *sizing.EnvError naming the variable.
func Open(ctx context.Context, getenv func(string) string) (gate.Backend, func() error, error) {
	project := strings.TrimSpace(getenv(gateenv.EnvProject))
	if project == "" {
		return nil, nil, &sizing.EnvError{Var: gateenv.EnvProject, Want: "the Google Cloud project id that holds the Datastore database"}
	}
	db := strings.TrimSpace(getenv(gateenv.EnvDatastoreDatabase))
	if db == "(default)" { // the console's name for it; the API wants the empty id
		db = ""
	}
	skew := datastoregate.DefaultMaxClockSkew
	if v := strings.TrimSpace(getenv(gateenv.EnvDatastoreMaxClockSkew)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > time.Minute {
			return nil, nil, &sizing.EnvError{Var: gateenv.EnvDatastoreMaxClockSkew, Value: v,
				Want: "a Go duration from 0s to 1m, the largest difference between two instances' clocks", Err: err}
		}
		skew = d
	}
	c, err := datastore.NewClientWithDatabase(ctx, project, db)
	if err != nil {
		return nil, nil, fmt.Errorf("new client: %w", err)
	}
	s, err := datastoregate.New(c, &datastoregate.Options{Kind: strings.TrimSpace(getenv(gateenv.EnvDatastoreKind)), MaxClockSkew: skew})
	if err != nil {
		_ = c.Close()
		return nil, nil, &sizing.EnvError{Var: gateenv.EnvDatastoreKind, Value: getenv(gateenv.EnvDatastoreKind),
			Want: "an entity kind of at most 1,500 bytes, not of the reserved form __*__", Err: err}
	}
	return s, c.Close, nil
}
