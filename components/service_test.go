package components

import (
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/sizing"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func serviceArgs() *ServiceArgs {
	return &ServiceArgs{
		Project:     pulumi.String(testProject),
		Region:      pulumi.String("europe-west1"),
		Image:       pulumi.String("europe-docker.pkg.dev/acme-prod/oncegate/worker:v1"),
		Plan:        plan,
		Backend:     BackendArgs{Datastore: DatastoreBackendArgs{Kind: "Orders"}},
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

// envOf returns the container's variables as ordered name=value pairs; a
// secret reference is written name=secret:<secret>@<version>.
func envOf(t *testing.T, r rec) []string {
	t.Helper()
	var out []string
	for _, e := range get(t, r, "template.containers.0.envs").ArrayValue() {
		o := e.ObjectValue()
		if v, ok := o["value"]; ok {
			out = append(out, o["name"].StringValue()+"="+v.StringValue())
			continue
		}
		ref := o["valueSource"].ObjectValue()["secretKeyRef"].ObjectValue()
		secret := ref["secret"]
		if secret.IsSecret() {
			secret = secret.SecretValue().Element
		}
		out = append(out, o["name"].StringValue()+"=secret:"+secret.StringValue()+"@"+ref["version"].StringValue())
	}
	return out
}

// planEnvFor lists every variable of p's environment, in the Service's order.
func planEnvFor(p sizing.Plan) []string {
	var out []string
	env := p.Env()
	for _, k := range planEnvNames(p) {
		out = append(out, k+"="+env[k])
	}
	if len(out) != len(env) {
		panic("planEnvNames misses a variable of Plan.Env")
	}
	return out
}

// contractFor lists the variables a Datastore-backed service running p gets,
// in order, without OIDC. The default database travels as the empty string.
func contractFor(p sizing.Plan, namespace, kind, database string) []string {
	out := []string{
		"ONCEGATE_BACKEND=datastore",
		"ONCEGATE_NAMESPACE=" + namespace,
		"GOOGLE_CLOUD_PROJECT=" + testProject,
		"ONCEGATE_DATASTORE_KIND=" + kind,
		"ONCEGATE_DATASTORE_DATABASE=" + strings.TrimSuffix(database, "(default)"),
	}
	return append(out, planEnvFor(p)...)
}

func joined(l []string) string { return strings.Join(l, "\n") }

func TestService(t *testing.T) {
	m, err := newService(serviceArgs())
	if err != nil {
		t.Fatal(err)
	}
	svc := m.one(t, "gcp:cloudrunv2/service:Service", "orders-service")
	wantStr(t, svc, "location", "europe-west1")
	// Internal-only by default: Pub/Sub push from the same project still
	// reaches the run.app URL, the internet does not.
	wantStr(t, svc, "ingress", "INGRESS_TRAFFIC_INTERNAL_ONLY")
	if v := get(t, svc, "invokerIamDisabled"); !v.IsBool() || v.BoolValue() {
		t.Errorf("invokerIamDisabled = %v, want false", v)
	}
	wantStr(t, svc, "template.timeout", "300s")
	wantStr(t, svc, "template.serviceAccount", "orders-run@"+testProject+".iam.gserviceaccount.com")
	wantStr(t, svc, "template.containers.0.image", "europe-docker.pkg.dev/acme-prod/oncegate/worker:v1")
	if got := num(t, svc, "template.maxInstanceRequestConcurrency"); got != 8 {
		t.Errorf("concurrency = %d, want 8", got)
	}
	if has(svc, "customAudiences") {
		t.Errorf("customAudiences set without an OIDC identity")
	}
	for _, k := range []resource.PropertyKey{"vpcAccess", "encryptionKey", "volumes"} {
		if _, ok := get(t, svc, "template").ObjectValue()[k]; ok {
			t.Errorf("template.%s set without being asked", k)
		}
	}
	got := envOf(t, svc)
	want := append(contractFor(plan.WithDefaults(), "orders", "Orders", "(default)"), "SUPPLIER_URL=https://supplier.example/orders")
	if joined(got) != joined(want) {
		t.Errorf("env:\n%s\nwant:\n%s", joined(got), joined(want))
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
	args.Namespace, args.Backend.Datastore.Database = "orders-v2", "gates"
	args.MinInstances, args.MaxInstances = 1, 5
	args.DeletionProtection = true
	args.Ingress = "INGRESS_TRAFFIC_ALL"
	args.Name = pulumi.String("orders-gw")
	args.ServiceAccountID = "orders-gateway"
	args.Labels = pulumi.StringMap{"team": pulumi.String("payments")}
	args.CPU, args.Memory, args.HealthPath = "2", "1Gi", "/healthz"
	args.KMSKeyName = pulumi.String("projects/acme-prod/locations/europe-west1/keyRings/r/cryptoKeys/k")
	args.OIDC = OIDCArgs{Audience: pulumi.String("oncegate/acme-prod/orders"), ServiceAccountEmail: pulumi.String(pushEmail)}
	args.SecretEnv = map[string]SecretRef{"SUPPLIER_TOKEN": {Secret: pulumi.String("supplier-token"), Version: "3"}}
	args.VPC = &VPCArgs{Network: pulumi.String("projects/acme-prod/global/networks/default"), Subnetwork: pulumi.String("run-egress")}
	m, err := newService(args)
	if err != nil {
		t.Fatal(err)
	}
	svc := m.one(t, "gcp:cloudrunv2/service:Service", "orders-service")
	wantStr(t, svc, "name", "orders-gw")
	wantStr(t, svc, "template.timeout", "596s")
	wantStr(t, svc, "ingress", "INGRESS_TRAFFIC_ALL")
	wantStr(t, svc, "labels.team", "payments")
	if num(t, svc, "template.scaling.minInstanceCount") != 1 || num(t, svc, "template.scaling.maxInstanceCount") != 5 {
		t.Errorf("scaling = %v", get(t, svc, "template.scaling"))
	}
	if v := get(t, svc, "deletionProtection"); !v.IsBool() || !v.BoolValue() {
		t.Errorf("deletionProtection = %v", v)
	}
	wantStr(t, svc, "template.containers.0.resources.limits.cpu", "2")
	wantStr(t, svc, "template.containers.0.resources.limits.memory", "1Gi")
	wantStr(t, svc, "template.containers.0.startupProbe.httpGet.path", "/healthz")
	wantStr(t, svc, "template.containers.0.livenessProbe.httpGet.path", "/healthz")
	wantStr(t, svc, "template.encryptionKey", "projects/acme-prod/locations/europe-west1/keyRings/r/cryptoKeys/k")
	wantStr(t, svc, "customAudiences.0", "oncegate/acme-prod/orders")
	wantStr(t, svc, "template.vpcAccess.egress", "PRIVATE_RANGES_ONLY")
	wantStr(t, svc, "template.vpcAccess.networkInterfaces.0.network", "projects/acme-prod/global/networks/default")
	wantStr(t, svc, "template.vpcAccess.networkInterfaces.0.subnetwork", "run-egress")
	wantStr(t, m.one(t, "gcp:serviceaccount/account:Account", "orders-run-sa"), "accountId", "orders-gateway")
	env := joined(envOf(t, svc))
	for _, kv := range []string{"ONCEGATE_NAMESPACE=orders-v2", "ONCEGATE_DATASTORE_DATABASE=gates", "ONCEGATE_REQUEST_TIMEOUT=9m56s", "ONCEGATE_STORE_TIMEOUT=2s", "ONCEGATE_HEARTBEAT=0s",
		"ONCEGATE_OIDC_AUDIENCE=oncegate/acme-prod/orders", "ONCEGATE_OIDC_SERVICE_ACCOUNT=" + pushEmail,
		"SUPPLIER_TOKEN=secret:supplier-token@3"} {
		if !strings.Contains(env, kv+"\n") && !strings.HasSuffix(env, kv) {
			t.Errorf("env lacks %s:\n%s", kv, env)
		}
	}
	acc := m.one(t, "gcp:secretmanager/secretIamMember:SecretIamMember", "orders-secret-env-supplier-token")
	wantStr(t, acc, "secretId", "supplier-token")
	wantStr(t, acc, "role", "roles/secretmanager.secretAccessor")
	wantStr(t, acc, "member", "serviceAccount:orders-gateway@"+testProject+".iam.gserviceaccount.com")
	if !m.dependsOn(t, svc, "orders-secret-env-supplier-token") {
		t.Errorf("the service does not wait for its secret access")
	}
}

func TestServiceExistingAccount(t *testing.T) {
	args := serviceArgs()
	args.ServiceAccountEmail = pulumi.String("gateway@acme-prod.iam.gserviceaccount.com")
	m, err := newService(args)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.of("gcp:serviceaccount/account:Account")); n != 0 {
		t.Errorf("%d accounts created for an existing one", n)
	}
	wantStr(t, m.one(t, "gcp:cloudrunv2/service:Service", "orders-service"), "template.serviceAccount", "gateway@acme-prod.iam.gserviceaccount.com")
	wantStr(t, m.one(t, "gcp:projects/iAMMember:IAMMember", "orders-datastore-user"), "member", "serviceAccount:gateway@acme-prod.iam.gserviceaccount.com")
}

// TestServiceRedis creates Memorystore with noeviction and AUTH, keeps its URL
// in a secret, and hands the service only a reference to it, over VPC.
func TestServiceRedis(t *testing.T) {
	args := serviceArgs()
	args.Backend = BackendArgs{Redis: &RedisBackendArgs{MemorySizeGB: 2}}
	args.VPC = &VPCArgs{Network: pulumi.String("projects/acme-prod/global/networks/default"), Subnetwork: pulumi.String("run-egress")}
	m, err := newService(args)
	if err != nil {
		t.Fatal(err)
	}
	inst := m.one(t, "gcp:redis/instance:Instance", "orders-redis")
	wantStr(t, inst, "redisConfigs.maxmemory-policy", "noeviction")
	wantStr(t, inst, "authorizedNetwork", "projects/acme-prod/global/networks/default")
	wantStr(t, inst, "tier", "STANDARD_HA")
	wantStr(t, inst, "redisVersion", "REDIS_7_2")
	wantStr(t, inst, "connectMode", "DIRECT_PEERING")
	if v := get(t, inst, "authEnabled"); !v.BoolValue() {
		t.Errorf("authEnabled = %v", v)
	}
	if num(t, inst, "memorySizeGb") != 2 {
		t.Errorf("memorySizeGb = %v", get(t, inst, "memorySizeGb"))
	}
	ver := m.one(t, "gcp:secretmanager/secretVersion:SecretVersion", "orders-redis-addr-v")
	if d := ver.inputs["secretData"]; !d.ContainsSecrets() || get(t, ver, "secretData").StringValue() != "redis://:s3cret@10.1.2.3:6378" {
		t.Errorf("secretData = %v, want the instance's URL, as a secret", d)
	}
	svc := m.one(t, "gcp:cloudrunv2/service:Service", "orders-service")
	env := envOf(t, svc)
	want := []string{"ONCEGATE_BACKEND=redis", "ONCEGATE_NAMESPACE=orders", "GOOGLE_CLOUD_PROJECT=" + testProject, "ONCEGATE_REDIS_ADDR=secret:orders-redis-addr@latest"}
	if joined(env[:4]) != joined(want) {
		t.Errorf("env:\n%s\nwant first:\n%s", joined(env), joined(want))
	}
	if strings.Contains(joined(env), "s3cret") || strings.Contains(joined(env), "DATASTORE") {
		t.Errorf("env carries the AUTH string or Datastore variables:\n%s", joined(env))
	}
	m.one(t, "gcp:secretmanager/secretIamMember:SecretIamMember", "orders-secret-redis")
	if n := len(m.of("gcp:projects/iAMMember:IAMMember")); n != 0 {
		t.Errorf("%d project roles granted for Redis, want none", n)
	}
	wantStr(t, svc, "template.vpcAccess.networkInterfaces.0.subnetwork", "run-egress")
	checkFamily(t, m, "orders")

	// An existing server: only the reference, no instance.
	args.Backend.Redis = &RedisBackendArgs{Addr: &SecretRef{Secret: pulumi.String("redis-url")}}
	m, err = newService(args)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.of("gcp:redis/instance:Instance")) + len(m.of("gcp:secretmanager/secret:Secret")); n != 0 {
		t.Errorf("%d instances or secrets created for an existing server", n)
	}
	if e := joined(envOf(t, m.one(t, "gcp:cloudrunv2/service:Service", "orders-service"))); !strings.Contains(e, "ONCEGATE_REDIS_ADDR=secret:redis-url@latest") {
		t.Errorf("env:\n%s", e)
	}
}

// TestServiceSQL mounts the Cloud SQL socket, reads the DSN from its secret
// and caps the pool at the instance's concurrency.
func TestServiceSQL(t *testing.T) {
	for _, c := range []struct{ concurrency, want int }{{0, DefaultConcurrency}, {8, 8}} {
		args := serviceArgs()
		args.Concurrency = c.concurrency
		args.Backend = BackendArgs{SQL: &SQLBackendArgs{Instance: pulumi.String("acme-prod:europe-west1:gates"), DSN: SecretRef{Secret: pulumi.String("gates-dsn")}}}
		m, err := newService(args)
		if err != nil {
			t.Fatal(err)
		}
		svc := m.one(t, "gcp:cloudrunv2/service:Service", "orders-service")
		wantStr(t, svc, "template.volumes.0.name", "cloudsql")
		wantStr(t, svc, "template.volumes.0.cloudSqlInstance.instances.0", "acme-prod:europe-west1:gates")
		wantStr(t, svc, "template.containers.0.volumeMounts.0.name", "cloudsql")
		wantStr(t, svc, "template.containers.0.volumeMounts.0.mountPath", "/cloudsql")
		env := envOf(t, svc)
		want := []string{"ONCEGATE_BACKEND=sql", "ONCEGATE_NAMESPACE=orders", "GOOGLE_CLOUD_PROJECT=" + testProject,
			"ONCEGATE_SQL_DSN=secret:gates-dsn@latest", "ONCEGATE_SQL_MAX_CONNS=" + itoa(c.want)}
		if joined(env[:5]) != joined(want) {
			t.Errorf("env:\n%s\nwant first:\n%s", joined(env), joined(want))
		}
		wantStr(t, m.one(t, "gcp:projects/iAMMember:IAMMember", "orders-sql-client"), "role", "roles/cloudsql.client")
		wantStr(t, m.one(t, "gcp:secretmanager/secretIamMember:SecretIamMember", "orders-secret-sql-dsn"), "secretId", "gates-dsn")
		if n := len(m.of("gcp:projects/iAMMember:IAMMember")); n != 1 {
			t.Errorf("%d project roles, want only cloudsql.client", n)
		}
	}
}

func TestServiceRefuses(t *testing.T) {
	vpc := &VPCArgs{Network: pulumi.String("n"), Subnetwork: pulumi.String("s")}
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
			"Env ONCEGATE_LEASE: the configuration contract sets it"},
		{"env overrides the backend", func(a *ServiceArgs) { a.Env["ONCEGATE_BACKEND"] = pulumi.String("redis") }, "Env ONCEGATE_BACKEND"},
		{"env overrides the OIDC audience", func(a *ServiceArgs) { a.Env["ONCEGATE_OIDC_AUDIENCE"] = pulumi.String("x") }, "Env ONCEGATE_OIDC_AUDIENCE"},
		{"env disables the gate", func(a *ServiceArgs) { a.Env["ONCEGATE_DISABLED"] = pulumi.String("1") }, "unguarded"},
		{"env disables token checks", func(a *ServiceArgs) { a.Env["ONCEGATE_OIDC_DISABLED"] = pulumi.String("1") },
			"Env ONCEGATE_OIDC_DISABLED: it turns off the push token check"},
		{"secret env disables token checks", func(a *ServiceArgs) {
			a.SecretEnv = map[string]SecretRef{"ONCEGATE_OIDC_DISABLED": {Secret: pulumi.String("s")}}
		}, "SecretEnv ONCEGATE_OIDC_DISABLED: it turns off the push token check"},
		{"secret env overrides the DSN", func(a *ServiceArgs) {
			a.SecretEnv = map[string]SecretRef{"ONCEGATE_SQL_DSN": {Secret: pulumi.String("s")}}
		}, "SecretEnv ONCEGATE_SQL_DSN"},
		{"secret env twice", func(a *ServiceArgs) {
			a.SecretEnv = map[string]SecretRef{"SUPPLIER_URL": {Secret: pulumi.String("s")}}
		}, "in both Env and SecretEnv"},
		{"secret without a secret", func(a *ServiceArgs) { a.SecretEnv = map[string]SecretRef{"TOKEN": {}} }, "SecretEnv[TOKEN].Secret is required"},
		{"bad secret version", func(a *ServiceArgs) {
			a.SecretEnv = map[string]SecretRef{"TOKEN": {Secret: pulumi.String("s"), Version: "newest"}}
		}, `Version "newest" must be latest or a version number`},
		{"reserved name", func(a *ServiceArgs) { a.Env["PORT"] = pulumi.String("9090") }, `Env "PORT": Cloud Run reserves`},
		{"no image", func(a *ServiceArgs) { a.Image = nil }, "Image"},
		{"bad account id", func(a *ServiceArgs) { a.ServiceAccountID = "x" }, "ServiceAccountID"},
		{"account id and email", func(a *ServiceArgs) {
			a.ServiceAccountID, a.ServiceAccountEmail = "orders-gateway", pulumi.String("x@y")
		}, "exclude each other"},
		{"unknown ingress", func(a *ServiceArgs) { a.Ingress = "internal" }, `Ingress "internal" is not one of`},
		{"concurrency", func(a *ServiceArgs) { a.Concurrency = 1001 }, "Concurrency 1001 must be 1–1000"},
		{"instances", func(a *ServiceArgs) { a.MinInstances, a.MaxInstances = 5, 2 }, "min ≤ max"},
		{"cpu", func(a *ServiceArgs) { a.CPU = "two" }, `CPU "two"`},
		{"memory", func(a *ServiceArgs) { a.Memory = "1GB" }, `Memory "1GB"`},
		{"health path", func(a *ServiceArgs) { a.HealthPath = "healthz" }, `HealthPath "healthz"`},
		{"vpc without subnet", func(a *ServiceArgs) { a.VPC = &VPCArgs{Network: pulumi.String("n")} }, "VPC.Network and VPC.Subnetwork"},
		{"vpc egress", func(a *ServiceArgs) {
			a.VPC = &VPCArgs{Network: pulumi.String("n"), Subnetwork: pulumi.String("s"), Egress: "ALL"}
		}, `VPC.Egress "ALL"`},
		{"redis without vpc", func(a *ServiceArgs) { a.Backend.Redis = &RedisBackendArgs{} }, "Backend.Redis needs VPC"},
		{"redis tier", func(a *ServiceArgs) { a.VPC, a.Backend.Redis = vpc, &RedisBackendArgs{Tier: "PREMIUM"} }, `Tier "PREMIUM"`},
		{"redis size", func(a *ServiceArgs) { a.VPC, a.Backend.Redis = vpc, &RedisBackendArgs{MemorySizeGB: -1} }, "MemorySizeGB -1"},
		{"redis version", func(a *ServiceArgs) { a.VPC, a.Backend.Redis = vpc, &RedisBackendArgs{Version: "REDIS_6_X"} }, "Version \"REDIS_6_X\" is not one of REDIS_7_0, REDIS_7_2"},
		{"two backends", func(a *ServiceArgs) {
			a.VPC, a.Backend.Redis, a.Backend.SQL = vpc, &RedisBackendArgs{}, &SQLBackendArgs{}
		}, "exclude each other"},
		{"sql without instance", func(a *ServiceArgs) { a.Backend.SQL = &SQLBackendArgs{DSN: SecretRef{Secret: pulumi.String("d")}} }, "Backend.SQL.Instance is required"},
		{"sql without dsn", func(a *ServiceArgs) { a.Backend.SQL = &SQLBackendArgs{Instance: pulumi.String("p:r:i")} }, "Backend.SQL.DSN.Secret is required"},
		{"half an OIDC identity", func(a *ServiceArgs) { a.OIDC.Audience = pulumi.String("aud") }, "OIDC.Audience and OIDC.ServiceAccountEmail go together"},
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
