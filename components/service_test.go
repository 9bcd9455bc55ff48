package components

import (
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/sizing"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func serviceArgs() *ServiceArgs {
	return &ServiceArgs{
		Project:     pulumi.String(testProject),
		Region:      pulumi.String("europe-west1"),
		Image:       pulumi.String("europe-docker.pkg.dev/acme-prod/oncegate/worker:v1"),
		Plan:        plan,
		Kind:        "Orders",
		Concurrency: 8,
		Env:         map[string]pulumi.StringInput{"SUPPLIER_URL": pulumi.String("https://supplier.example/orders")},
	}
}

func newService(args *ServiceArgs) (*mocks, error) {
	return run(func(ctx *pulumi.Context) error {
		_, err := NewService(ctx, "orders", args)
		return err
	})
}

// envOf returns the container's variables as ordered name=value pairs.
func envOf(t *testing.T, r rec) []string {
	t.Helper()
	var out []string
	for _, e := range get(t, r, "template.containers.0.envs").ArrayValue() {
		o := e.ObjectValue()
		out = append(out, o["name"].StringValue()+"="+o["value"].StringValue())
	}
	return out
}

// contractFor lists the variables a service running p must get, in order. The
// default database travels as the empty string, the Datastore API's name for it.
func contractFor(p sizing.Plan, namespace, kind, database string) []string {
	out := []string{
		"ONCEGATE_BACKEND=datastore",
		"ONCEGATE_NAMESPACE=" + namespace,
		"ONCEGATE_DATASTORE_KIND=" + kind,
		"ONCEGATE_DATASTORE_DATABASE=" + strings.TrimSuffix(database, "(default)"),
		"GOOGLE_CLOUD_PROJECT=" + testProject,
	}
	env := p.Env()
	for _, k := range sizing.EnvNames() {
		out = append(out, k+"="+env[k])
	}
	return out
}

func TestService(t *testing.T) {
	m, err := newService(serviceArgs())
	if err != nil {
		t.Fatal(err)
	}
	svc := m.one(t, "gcp:cloudrunv2/service:Service", "orders-service")
	wantStr(t, svc, "location", "europe-west1")
	wantStr(t, svc, "ingress", "INGRESS_TRAFFIC_ALL")
	if v := get(t, svc, "invokerIamDisabled"); !v.IsBool() || v.BoolValue() {
		t.Errorf("invokerIamDisabled = %v, want false", v)
	}
	wantStr(t, svc, "template.timeout", "300s")
	wantStr(t, svc, "template.serviceAccount", "orders-run@"+testProject+".iam.gserviceaccount.com")
	wantStr(t, svc, "template.containers.0.image", "europe-docker.pkg.dev/acme-prod/oncegate/worker:v1")
	if got := num(t, svc, "template.maxInstanceRequestConcurrency"); got != 8 {
		t.Errorf("concurrency = %d, want 8", got)
	}
	got := envOf(t, svc)
	want := append(contractFor(plan.WithDefaults(), "orders", "Orders", "(default)"), "SUPPLIER_URL=https://supplier.example/orders")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("env:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The numbers in the environment read back, through sizing, to the plan.
	vals := map[string]string{}
	for _, kv := range got {
		k, v, _ := strings.Cut(kv, "=")
		vals[k] = v
	}
	back, err := sizing.FromEnv(func(k string) string { return vals[k] })
	if err != nil || back != plan.WithDefaults() {
		t.Errorf("FromEnv(service env) = %+v, %v; want %+v", back, err, plan.WithDefaults())
	}

	sa := m.one(t, "gcp:serviceaccount/account:Account", "orders-run-sa")
	wantStr(t, sa, "accountId", "orders-run")
	role := m.one(t, "gcp:projects/iAMMember:IAMMember", "orders-datastore-user")
	wantStr(t, role, "project", testProject)
	wantStr(t, role, "role", "roles/datastore.user")
	wantStr(t, role, "member", "serviceAccount:orders-run@"+testProject+".iam.gserviceaccount.com")
	if !m.dependsOn(t, svc, "orders-datastore-user") {
		t.Errorf("the service does not wait for its datastore role")
	}
	// No invoker at all here, and nowhere a public one.
	if n := len(m.of("gcp:cloudrunv2/serviceIamMember:ServiceIamMember")); n != 0 {
		t.Errorf("Service granted %d invokers; only the push subscription grants one", n)
	}
	if len(m.res) != 4 {
		t.Errorf("%d resources, want 4", len(m.res))
	}
	checkFamily(t, m, "orders")
}

func TestServiceOptions(t *testing.T) {
	args := serviceArgs()
	// An unrenewed plan whose time budget (claim 2s + work + complete 2s +
	// unknown mark 2s) outlasts Cloud Run's default request timeout: the
	// timeout follows the budget.
	args.Plan = sizing.Plan{Lease: 600 * time.Second, WorkDeadline: 590 * time.Second}
	args.Namespace, args.Database = "orders-v2", "gates"
	args.MinInstances, args.MaxInstances = 1, 5
	args.DeletionProtection = true
	args.Ingress = "INGRESS_TRAFFIC_INTERNAL_ONLY"
	args.Name = pulumi.String("orders-gw")
	args.ServiceAccountID = "orders-gateway"
	args.Labels = pulumi.StringMap{"team": pulumi.String("payments")}
	m, err := newService(args)
	if err != nil {
		t.Fatal(err)
	}
	svc := m.one(t, "gcp:cloudrunv2/service:Service", "orders-service")
	wantStr(t, svc, "name", "orders-gw")
	wantStr(t, svc, "template.timeout", "596s")
	wantStr(t, svc, "ingress", "INGRESS_TRAFFIC_INTERNAL_ONLY")
	wantStr(t, svc, "labels.team", "payments")
	if num(t, svc, "template.scaling.minInstanceCount") != 1 || num(t, svc, "template.scaling.maxInstanceCount") != 5 {
		t.Errorf("scaling = %v", get(t, svc, "template.scaling"))
	}
	if v := get(t, svc, "deletionProtection"); !v.IsBool() || !v.BoolValue() {
		t.Errorf("deletionProtection = %v", v)
	}
	wantStr(t, m.one(t, "gcp:serviceaccount/account:Account", "orders-run-sa"), "accountId", "orders-gateway")
	env := envOf(t, svc)
	for _, kv := range []string{"ONCEGATE_NAMESPACE=orders-v2", "ONCEGATE_DATASTORE_DATABASE=gates", "ONCEGATE_REQUEST_TIMEOUT=9m56s", "ONCEGATE_STORE_TIMEOUT=2s", "ONCEGATE_HEARTBEAT=0s"} {
		if !strings.Contains(strings.Join(env, "\n"), kv) {
			t.Errorf("env lacks %s:\n%s", kv, strings.Join(env, "\n"))
		}
	}
}

func TestServiceRefuses(t *testing.T) {
	tests := []struct {
		name string
		edit func(*ServiceArgs)
		msg  string
	}{
		{"unsafe plan", func(a *ServiceArgs) { a.Plan.Heartbeat = a.Plan.Lease / 2 },
			"Heartbeat 30s must be at most a third of the lease 1m"},
		{"work outlives the request", func(a *ServiceArgs) { a.Plan.RequestTimeout = 30 * time.Second },
			"Time budget 1m6s (claim 2s + work deadline 1m + complete 2s + unknown mark 2s) exceeds the Cloud Run request timeout 30s"},
		{"env overrides the plan", func(a *ServiceArgs) { a.Env["ONCEGATE_LEASE"] = pulumi.String("1h") },
			"env ONCEGATE_LEASE: the configuration contract sets it"},
		{"env overrides the backend", func(a *ServiceArgs) { a.Env["ONCEGATE_BACKEND"] = pulumi.String("redis") }, "env ONCEGATE_BACKEND"},
		{"reserved name", func(a *ServiceArgs) { a.Env["PORT"] = pulumi.String("9090") }, `env "PORT": Cloud Run reserves`},
		{"no image", func(a *ServiceArgs) { a.Image = nil }, "Image"},
		{"bad account id", func(a *ServiceArgs) { a.ServiceAccountID = "x" }, "ServiceAccountID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := serviceArgs()
			tt.edit(args)
			m, err := newService(args)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.msg)
			}
			if len(m.res) != 0 {
				t.Errorf("%d resources registered before the error", len(m.res))
			}
		})
	}
}
