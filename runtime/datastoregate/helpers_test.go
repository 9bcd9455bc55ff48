package datastoregate_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"github.com/oncegate/oncegate/internal/dsfake"
	"github.com/oncegate/oncegate/runtime/datastoregate"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gatetest"
)

// fixture is one fake, one client and one Store with a hand-moved clock.
type fixture struct {
	srv   *dsfake.Server
	c     *datastore.Client
	s     *datastoregate.Store
	clock *gatetest.Clock
	ctx   context.Context
}

func newFixture(t *testing.T, opts *datastoregate.Options) *fixture {
	t.Helper()
	srv := dsfake.Start(t)
	f := &fixture{srv: srv, c: srv.Client(t, ""), clock: newClock(), ctx: context.Background()}
	var o datastoregate.Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = f.clock.Now
	}
	if o.RetryBackoff == 0 {
		o.RetryBackoff = time.Millisecond
	}
	s, err := datastoregate.New(f.c, &o)
	if err != nil {
		t.Fatal(err)
	}
	f.s = s
	return f
}

func claimReq(key, token string) gate.ClaimRequest {
	return gate.ClaimRequest{Key: key, Token: token, Owner: "test", Lease: time.Minute, TTL: time.Hour}
}

// win claims key with token and fails the test unless the claim is won.
func (f *fixture) win(t *testing.T, key, token string) gate.Record {
	t.Helper()
	res, err := f.s.Claim(f.ctx, claimReq(key, token))
	if err != nil || res.Status != gate.Won {
		t.Fatalf("Claim(%q) = %v, %v; want won", key, res.Status, err)
	}
	return res.Record
}

// raw reads the stored entity of key name in the default kind and namespace.
func (f *fixture) raw(t *testing.T, name string) datastore.PropertyList {
	t.Helper()
	var ps datastore.PropertyList
	if err := f.c.Get(f.ctx, datastore.NameKey(datastoregate.DefaultKind, name, nil), &ps); err != nil {
		t.Fatalf("raw Get(%q): %v", name, err)
	}
	return ps
}
