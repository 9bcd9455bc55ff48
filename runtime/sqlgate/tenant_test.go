package sqlgate_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/tink-crypto/tink-go/v2/aead"
	"github.com/tink-crypto/tink-go/v2/keyset"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// TestPrincipalScopedKeysIsolateTenants: with keys scoped by principal
// (gate.OperationKey(tenant, key), as idemhttp's Options.Principal builds
// them), one tenant's key never returns another tenant's stored result through
// gate.Do, even for the same client key and payload, or for parts that a plain
// join would run together; and a result sealed under tenant A's key does not
// open under tenant B's, since the AEAD's associated data binds the whole
// namespaced key, principal included.
func TestPrincipalScopedKeysIsolateTenants(t *testing.T) {
	h, err := keyset.NewHandle(aead.AES256GCMKeyTemplate())
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := aead.New(h)
	if err != nil {
		t.Fatal(err)
	}
	forEachDialect(t, func(t *testing.T, d sqlgate.Dialect) {
		ctx := context.Background()
		s := newStore(t, openDB(t, d, nil), d)
		g, err := gate.New(s, &gate.Options{Namespace: "api", Lease: time.Minute, AEAD: sealer})
		if err != nil {
			t.Fatal(err)
		}
		do := func(tenant, key, result string) (string, bool, error) {
			return gate.Do(ctx, g, gate.Call{Key: gate.OperationKey(tenant, key), Payload: []byte("POST /charges 100 EUR")},
				func(context.Context, gate.Claim) (string, error) { return result, nil })
		}
		for _, c := range []struct{ tenant, key string }{
			{"tenant-a", "charge-1"}, {"tenant-b", "charge-1"}, {"a:b", "c"}, {"a", "b:c"},
		} {
			want := "result of " + c.tenant + " " + c.key
			if v, executed, err := do(c.tenant, c.key, want); err != nil || !executed || v != want {
				t.Fatalf("first call of %s/%s = %q, %v, %v; want its own run", c.tenant, c.key, v, executed, err)
			}
			if v, executed, err := do(c.tenant, c.key, "must not run"); err != nil || executed || v != want {
				t.Fatalf("replay of %s/%s = %q, %v, %v; want its own stored %q", c.tenant, c.key, v, executed, err, want)
			}
		}

		// Move tenant A's sealed result into tenant B's record.
		keyA, keyB := g.Key(gate.OperationKey("tenant-a", "charge-1")), g.Key(gate.OperationKey("tenant-b", "charge-1"))
		recA, _, err := s.Inspect(ctx, keyA)
		if err != nil || len(recA.Result) == 0 {
			t.Fatalf("tenant A's record: %+v, %v", recA, err)
		}
		if string(recA.Result) == `"result of tenant-a charge-1"` {
			t.Fatal("tenant A's result is stored in the clear")
		}
		q := `UPDATE "` + s.Table() + `" SET result = ` + ph(d, 1) + ` WHERE "key" = ` + ph(d, 2)
		if d == sqlgate.MySQL {
			q = "UPDATE `" + s.Table() + "` SET result = ? WHERE `key` = ?"
		}
		if res, err := s.DB().Exec(q, recA.Result, keyB); err != nil {
			t.Fatal(err)
		} else if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("moved the result into %d records, want 1", n)
		}
		v, executed, err := do("tenant-b", "charge-1", "must not run")
		if !errors.Is(err, gate.ErrSealedResult) || executed || v != "" {
			t.Fatalf("tenant B with tenant A's sealed result = %q, %v, %v; want ErrSealedResult and nothing", v, executed, err)
		}
		if v, _, err := do("tenant-a", "charge-1", "must not run"); err != nil || v != "result of tenant-a charge-1" {
			t.Fatalf("tenant A after the move = %q, %v", v, err)
		}

		// In-transaction runs are scoped the same way.
		for _, tenant := range []string{"tenant-a", "tenant-b"} {
			ran := false
			err := s.RunTx(ctx, gate.OperationKey(tenant, "invoice-9"), &sqlgate.TxOptions{Namespace: "api"}, func(*sql.Tx, gate.Claim) error {
				ran = true
				return nil
			})
			if err != nil || !ran {
				t.Fatalf("RunTx for %s = %v (ran %v); want its own run", tenant, err, ran)
			}
		}
	})
}
