package components

import (
	"strings"
	"sync"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// ttlOutputs collects a TTLPolicy's commands once they resolve.
type ttlOutputs struct {
	mu              sync.Mutex
	enable, check   string
	database, field string
}

func newTTL(args *TTLPolicyArgs) (*mocks, *ttlOutputs, error) {
	o := &ttlOutputs{}
	m, err := run(func(ctx *pulumi.Context) error {
		p, err := NewTTLPolicy(ctx, "orders", args)
		if err != nil {
			return err
		}
		pulumi.All(p.EnableCommand, p.CheckCommand, p.Database, p.Field).ApplyT(func(v []any) int {
			o.mu.Lock()
			defer o.mu.Unlock()
			o.enable, o.check, o.database, o.field = v[0].(string), v[1].(string), v[2].(string), v[3].(string)
			return 0
		})
		return nil
	})
	o.mu.Lock()
	defer o.mu.Unlock()
	return m, o, err
}

// checkNoField fails the test if any firestore.Field is registered: its
// provider create is an unmasked PATCH that a Datastore-mode database refuses
// (see TTLPolicy), so the policy must come from `oncegate ttl enable`.
func checkNoField(t *testing.T, m *mocks) {
	t.Helper()
	if f := m.of("gcp:firestore/field:Field"); len(f) != 0 {
		t.Errorf("%d firestore.Field registered (inputs %v); Datastore mode refuses its unmasked PATCH", len(f), f[0].inputs)
	}
}

func TestTTLPolicyExistingDatabase(t *testing.T) {
	m, o, err := newTTL(&TTLPolicyArgs{Project: pulumi.String(testProject)})
	if err != nil {
		t.Fatal(err)
	}
	checkNoField(t, m)
	if len(m.res) != 1 {
		t.Errorf("%d resources, want only the component", len(m.res))
	}
	if want := "oncegate ttl enable --project acme-prod --database '(default)' --kind OncegateRecord"; o.enable != want {
		t.Errorf("enable command = %q, want %q", o.enable, want)
	}
	if want := "oncegate ttl check --project acme-prod --database '(default)' --kind OncegateRecord"; o.check != want {
		t.Errorf("check command = %q, want %q", o.check, want)
	}
	if o.database != "(default)" || o.field != "expires_at" {
		t.Errorf("database %q field %q", o.database, o.field)
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
		m, o, err := newTTL(&TTLPolicyArgs{
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
		checkNoField(t, m)
		if !strings.Contains(o.enable, "--database 'gates' --kind Orders") {
			t.Errorf("enable command %q does not name the created database and kind", o.enable)
		}
		checkFamily(t, m, "orders")
	}
}

func TestTTLPolicyRefuses(t *testing.T) {
	db := func(d DatabaseArgs) *TTLPolicyArgs {
		return &TTLPolicyArgs{Project: pulumi.String(testProject), CreateDatabase: &d}
	}
	tests := []struct {
		name string
		args *TTLPolicyArgs
		msg  string
	}{
		{"entity groups", db(DatabaseArgs{LocationID: pulumi.String("eur3"), ConcurrencyMode: "OPTIMISTIC_WITH_ENTITY_GROUPS"}),
			"OPTIMISTIC_WITH_ENTITY_GROUPS does not support TTL policies; use PESSIMISTIC or OPTIMISTIC"},
		{"unknown mode", db(DatabaseArgs{LocationID: pulumi.String("eur3"), ConcurrencyMode: "LOCKED"}), `"LOCKED" is not one of`},
		{"no location", db(DatabaseArgs{}), "LocationID is required"},
		{"bad deletion policy", db(DatabaseArgs{LocationID: pulumi.String("eur3"), DeletionPolicy: "KEEP"}), `DeletionPolicy "KEEP" is not one of ABANDON, DELETE`},
		{"kind with a slash", &TTLPolicyArgs{Project: pulumi.String(testProject), Kind: "a/b"}, `kind "a/b"`},
		{"no project", &TTLPolicyArgs{}, "Project is required"},
		{"nil args", nil, "Project is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, err := newTTL(tt.args)
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

	m, err = run(func(ctx *pulumi.Context) error {
		_, err := NewProjectServices(ctx, "orders", &ProjectServicesArgs{Project: pulumi.String(testProject), Services: []string{"run.googleapis.com", ".x"}})
		return err
	})
	if err == nil || len(m.res) != 0 {
		t.Errorf("empty service name: err %v, %d resources registered", err, len(m.res))
	}
}
