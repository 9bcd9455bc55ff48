package gatetest

import (
	"strings"
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
)

var keyTests = map[string]func(*testing.T, *env){
	"KeysAreIsolated": func(t *testing.T, e *env) {
		a := e.win("order:1", LongLease)
		e.complete("order:1", a.Fence, TTL, nil)
		b := e.win("order:2", LongLease)
		wantFence(t, "other key", b.Fence, 1)
		e.win("order:10", LongLease)
		e.win("Order:1", LongLease)
		e.expect("order:1", gate.AlreadyDone)
		e.expect("order:2", gate.HeldByOther)
	},
	"LongKeysWorkAndStayDistinct": func(t *testing.T, e *env) {
		base := strings.Repeat("k", 10*1024)
		a, b := base+"a", base+"b"
		r := e.win(a, LongLease)
		if !e.complete(a, r.Fence, TTL, []byte("ra")) {
			t.Fatal("complete of a 10 KB key refused")
		}
		e.win(b, LongLease)
		if d := e.expect(a, gate.AlreadyDone); string(d.Result) != "ra" {
			t.Fatalf("10 KB key result = %q, want ra", d.Result)
		}
		e.expect(b, gate.HeldByOther)
	},
	"NonASCIIKeysWork": func(t *testing.T, e *env) {
		keys := []string{"commande:\u00e9", "commande:e\u0301", "注文:四二", "🧾:1", "k\u00a0"}
		for _, k := range keys {
			r := e.win(k, LongLease)
			e.complete(k, r.Fence, TTL, []byte(k))
		}
		for _, k := range keys {
			if d := e.expect(k, gate.AlreadyDone); string(d.Result) != k {
				t.Fatalf("key %q: result %q; keys must be byte-exact (NFC and NFD are distinct)", k, d.Result)
			}
		}
	},
	"HashedFormDoesNotCollide": func(t *testing.T, e *env) {
		long := strings.Repeat("x", 4096)
		hashed := gate.StoreKey(long, 100)
		r := e.win(long, LongLease)
		e.complete(long, r.Fence, TTL, nil)
		wantFence(t, "literal hashed form", e.win(hashed, LongLease).Fence, 1)
	},
}
