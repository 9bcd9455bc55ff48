package faults_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/datastoregate"
	"github.com/oncegate/oncegate/runtime/fencedsink"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/redisgate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// injections are names that try to break out of an identifier, a key prefix or
// a configuration line.
var injections = []string{
	`x; DROP TABLE oncegate_records`, `records" (id int); --`, "records`; --", `records'`, "records--",
	"a b", "a\tb", "a\nb", "a\r\nFLUSHALL\r\n", "a\x00b", "\xff\xfe", "{tag}", "a{b}", "tablé", "\u200brecords",
	"../../etc", "a/*", "a.b.c", strings.Repeat("t", 64), strings.Repeat("p", 257),
}

// TestConfigurationInjection: every table name, key prefix, kind, column and
// namespace that tries injection is refused at construction with an error
// naming the setting, on every constructor that takes one.
func TestConfigurationInjection(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "x.db")) // never connects here
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rc := redisClient(t, "127.0.0.1:1") // never dialled
	f := figures{Class: "configuration injection", Backend: "all"}
	refuse := func(what, name string, err error, field string) {
		t.Helper()
		f.Tried++
		switch {
		case err == nil:
			t.Errorf("%s accepted %q", what, name)
		case !strings.Contains(err.Error(), field):
			t.Errorf("%s refused %q without naming %s: %v", what, name, field, err)
		case strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: error over several lines: %q", what, err)
		default:
			f.Processed++
		}
	}
	for _, name := range injections {
		f.Messages++
		for _, d := range []sqlgate.Dialect{sqlgate.Postgres, sqlgate.MySQL, sqlgate.SQLite} {
			_, err := sqlgate.New(db, d, &sqlgate.Options{Table: name})
			refuse("sqlgate.New", name, err, "Table")
		}
		if _, err := fencedsink.New(name, nil); true {
			refuse("fencedsink.New table", name, err, "table")
		}
		_, err := fencedsink.New("fences", &fencedsink.Options{KeyColumn: name})
		refuse("fencedsink KeyColumn", name, err, "KeyColumn")
		_, err = fencedsink.New("fences", &fencedsink.Options{FenceColumn: name})
		refuse("fencedsink FenceColumn", name, err, "FenceColumn")
		if redisPrefixRefused(name) {
			_, err = redisgate.New(rc, &redisgate.Options{Prefix: name})
			refuse("redisgate.New", name, err, "Prefix")
		}
		if namespaceRefused(name) {
			refuse("gateenv ONCEGATE_NAMESPACE", name, gateenvNamespace(ctx, name), "ONCEGATE_NAMESPACE")
		}
	}
	// Datastore kinds and namespaces are data, not code (an RPC field), so only
	// the reserved and over-long forms are refused.
	dsc := datastoreEmulatorClient(t)
	for _, name := range []string{"__oncegate__", "__kind__", strings.Repeat("k", 1501)} {
		f.Messages++
		_, err := datastoregate.New(dsc, &datastoregate.Options{Kind: name})
		refuse("datastoregate Kind", name, err, "Kind")
		_, err = datastoregate.New(dsc, &datastoregate.Options{Namespace: name})
		refuse("datastoregate Namespace", name, err, "Namespace")
	}
	f.Note = "table names, key prefixes, sink columns, namespaces and reserved kinds: all refused, each error naming its setting on one line"
	report(t, f)
}

// redisPrefixRefused reports whether redisgate must refuse name as a prefix: it
// takes any printable UTF-8 without white space or braces, up to 256 bytes,
// because the key is binary-safe and SCAN patterns are escaped.
func redisPrefixRefused(name string) bool {
	if len(name) > 256 || !utf8.ValidString(name) || strings.ContainsAny(name, "{}") {
		return true
	}
	for _, r := range name {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
	}
	return false
}

// namespaceRefused reports whether gateenv must refuse name as
// ONCEGATE_NAMESPACE: it takes 1–256 ASCII letters, digits and . _ - / (a key
// prefix, never a path or code).
func namespaceRefused(name string) bool {
	if len(name) > 256 {
		return true
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/", r)) {
			return true
		}
	}
	return false
}

// gateenvNamespace loads a memory backend with ONCEGATE_NAMESPACE=name.
func gateenvNamespace(ctx context.Context, name string) error {
	env := map[string]string{"ONCEGATE_BACKEND": "memory", "ONCEGATE_NAMESPACE": name,
		"ONCEGATE_LEASE": "60s", "ONCEGATE_WORK_DEADLINE": "30s", "ONCEGATE_OIDC_DISABLED": "1"}
	c, err := gateenv.New(ctx, &gateenv.Options{Getenv: func(k string) string { return env[k] }, Logger: quietLog})
	if err == nil {
		_ = c.Close()
	}
	return err
}

// TestRedisPrefixGlobIsolation: a prefix holding glob metacharacters is allowed
// (Redis keys are binary-safe), and the SCAN behind ListUnresolved escapes them,
// so it never lists another prefix's records.
func TestRedisPrefixGlobIsolation(t *testing.T) {
	ctx := context.Background()
	base := testenv.UniqueName(t, "glob")
	addr := testenv.Redis(t)
	t.Cleanup(func() { deleteRedisPrefix(t, addr, base) })
	globbed := redisStore(t, addr, base+"*?[a]:")
	other := redisStore(t, addr, base+"Xya:")
	for _, s := range []*redisgate.Store{globbed, other} {
		res, err := s.Claim(ctx, gate.ClaimRequest{Key: "k", Token: "t", Lease: time.Minute, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := s.MarkUnknown(ctx, "k", res.Record.Fence); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	recs, err := globbed.ListUnresolved(ctx, 0)
	if err != nil || len(recs) != 1 {
		t.Fatalf("ListUnresolved under a globbing prefix = %d records, %v; want its own one", len(recs), err)
	}
	report(t, figures{Class: "configuration injection: glob prefix", Backend: "redis", Messages: 1, Tried: 1, Processed: 1,
		Note: "prefix \"…*?[a]:\" lists only its own unknown record, not \"…Xya:\"'s"})
}

// TestGateNamespaceColon: gate.Namespace joins namespace and key with ":", so
// a namespace holding a colon could make two gates on one store share records
// ("a" + "b:c" and "a:b" + "c"). gateenv refuses the colon; gate.New is checked
// here too.
func TestGateNamespaceColon(t *testing.T) {
	store := memgate.New(nil)
	a, errA := gate.New(store, &gate.Options{Namespace: "a", Logger: quietLog})
	ab, errAB := gate.New(store, &gate.Options{Namespace: "a:b", Logger: quietLog})
	if errA != nil {
		t.Fatal(errA)
	}
	if gateenvNamespace(context.Background(), "a:b") == nil {
		t.Fatal("gateenv accepted a namespace with a colon")
	}
	if errAB == nil {
		t.Fatalf("gate.New accepted Options.Namespace %q: gate \"a\" key \"b:c\" and gate \"a:b\" key \"c\" would be one record (%q, %q)", "a:b", a.Key("b:c"), ab.Key("c"))
	}
	if !strings.Contains(errAB.Error(), "gate.Options.Namespace") {
		t.Errorf("error %q does not name gate.Options.Namespace", errAB)
	}
}

// TestDatastoreNamesNotUTF8: a Kind or Namespace that is not valid UTF-8 can
// never be sent (protobuf strings are UTF-8), so it must be refused at
// construction, not on every call.
func TestDatastoreNamesNotUTF8(t *testing.T) {
	dsc := datastoreEmulatorClient(t)
	for _, o := range []datastoregate.Options{{Kind: "K\xff"}, {Namespace: "ns\xff"}} {
		s, err := datastoregate.New(dsc, &o)
		if err != nil {
			continue
		}
		_, cerr := s.Claim(context.Background(), gate.ClaimRequest{Key: "k", Token: "t", Lease: time.Minute, TTL: time.Hour})
		t.Errorf("datastoregate.New accepted Options %+q; every call then fails (%v) and the gate answers store-unavailable forever", []string{o.Kind, o.Namespace}, cerr)
	}
}
