package components

import (
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func newTTL(args *TTLPolicyArgs) (*mocks, error) {
	return run(func(ctx *pulumi.Context) error {
		_, err := NewTTLPolicy(ctx, "orders", args)
		return err
	})
}

// checkTTLField asserts the TTL field's whole configuration.
func checkTTLField(t *testing.T, m *mocks, name, kind, database string) {
	t.Helper()
	f := m.one(t, "gcp:firestore/field:Field", name)
	wantStr(t, f, "project", testProject)
	wantStr(t, f, "database", database)
	wantStr(t, f, "collection", kind)
	wantStr(t, f, "field", "expires_at")
	// An empty ttlConfig block enables the policy.
	if ttl := get(t, f, "ttlConfig"); !ttl.IsObject() || len(ttl.ObjectValue()) != 0 {
		t.Errorf("ttlConfig = %v, want an empty block", ttl)
	}
	// An empty indexConfig block (no indexes) turns single-field indexing off.
	if idx := get(t, f, "indexConfig"); !idx.IsObject() || len(idx.ObjectValue()) != 0 {
		t.Errorf("indexConfig = %v, want an empty block", idx)
	}
}

func TestTTLPolicyExistingDatabase(t *testing.T) {
	m, err := newTTL(&TTLPolicyArgs{Project: pulumi.String(testProject)})
	if err != nil {
		t.Fatal(err)
	}
	checkTTLField(t, m, "orders-field", DefaultKind, "(default)")
	if n := len(m.of("gcp:firestore/database:Database")); n != 0 {
		t.Errorf("%d databases created for an existing one", n)
	}
	if len(m.res) != 2 {
		t.Errorf("%d resources, want 2", len(m.res))
	}
	checkFamily(t, m, "orders")
}

func TestTTLPolicyKeepIndex(t *testing.T) {
	m, err := newTTL(&TTLPolicyArgs{Project: pulumi.String(testProject), KeepIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	f := m.one(t, "gcp:firestore/field:Field", "orders-field")
	if has(f, "indexConfig") {
		t.Errorf("indexConfig = %v, want it absent so expires_at keeps its index", f.inputs["indexConfig"])
	}
	if ttl := get(t, f, "ttlConfig"); !ttl.IsObject() {
		t.Errorf("ttlConfig = %v, want the policy on", ttl)
	}
}

func TestTTLPolicyCreatesDatabase(t *testing.T) {
	tests := []struct {
		mode, want string
		protect    bool
		policy     string
	}{
		{"", "PESSIMISTIC", false, ""},
		{"OPTIMISTIC", "OPTIMISTIC", true, "DELETE"},
	}
	for _, tt := range tests {
		m, err := newTTL(&TTLPolicyArgs{
			Project:  pulumi.String(testProject),
			Kind:     "Orders",
			Database: "gates",
			CreateDatabase: &DatabaseArgs{LocationID: pulumi.String("eur3"), ConcurrencyMode: tt.mode,
				DeleteProtection: tt.protect, DeletionPolicy: tt.policy},
		})
		if err != nil {
			t.Fatal(err)
		}
		db := m.one(t, "gcp:firestore/database:Database", "orders-db")
		wantStr(t, db, "name", "gates")
		wantStr(t, db, "type", "DATASTORE_MODE")
		wantStr(t, db, "concurrencyMode", tt.want)
		wantStr(t, db, "locationId", "eur3")
		if tt.protect {
			wantStr(t, db, "deleteProtectionState", "DELETE_PROTECTION_ENABLED")
		} else if has(db, "deleteProtectionState") {
			t.Errorf("delete protection set without being asked")
		}
		if tt.policy != "" {
			wantStr(t, db, "deletionPolicy", tt.policy)
		}
		checkTTLField(t, m, "orders-field", "Orders", "gates")
		if !m.dependsOn(t, m.one(t, "gcp:firestore/field:Field", "orders-field"), "orders-db") {
			t.Errorf("the TTL field does not wait for its database")
		}
	}
}

func TestTTLPolicyRefuses(t *testing.T) {
	tests := []struct {
		name string
		args *TTLPolicyArgs
		msg  string
	}{
		{"entity groups", &TTLPolicyArgs{Project: pulumi.String(testProject),
			CreateDatabase: &DatabaseArgs{LocationID: pulumi.String("eur3"), ConcurrencyMode: "OPTIMISTIC_WITH_ENTITY_GROUPS"}},
			"OPTIMISTIC_WITH_ENTITY_GROUPS does not support TTL policies; use PESSIMISTIC or OPTIMISTIC"},
		{"unknown mode", &TTLPolicyArgs{Project: pulumi.String(testProject),
			CreateDatabase: &DatabaseArgs{LocationID: pulumi.String("eur3"), ConcurrencyMode: "LOCKED"}}, `"LOCKED" is not one of`},
		{"no location", &TTLPolicyArgs{Project: pulumi.String(testProject), CreateDatabase: &DatabaseArgs{}}, "LocationID is required"},
		{"no project", &TTLPolicyArgs{}, "Project is required"},
		{"nil args", nil, "Project is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := newTTL(tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.msg)
			}
			if len(m.res) != 0 {
				t.Errorf("%d resources registered before the error", len(m.res))
			}
		})
	}
}

func TestProjectServices(t *testing.T) {
	m, err := run(func(ctx *pulumi.Context) error {
		_, err := NewProjectServices(ctx, "orders", &ProjectServicesArgs{Project: pulumi.String(testProject)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got := m.of("gcp:projects/service:Service")
	if len(got) != len(DefaultServices) {
		t.Fatalf("%d services, want %d", len(got), len(DefaultServices))
	}
	for _, svc := range DefaultServices {
		short, _, _ := strings.Cut(svc, ".")
		r := m.one(t, "gcp:projects/service:Service", "orders-"+short)
		wantStr(t, r, "service", svc)
		wantStr(t, r, "project", testProject)
		if v := get(t, r, "disableOnDestroy"); !v.IsBool() || v.BoolValue() {
			t.Errorf("%s: disableOnDestroy = %v, want false", svc, v)
		}
	}
	checkFamily(t, m, "orders")
}
