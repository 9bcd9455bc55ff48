package components

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oncegate/oncegate/sizing"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func consumerArgs() *ConsumerArgs {
	return &ConsumerArgs{
		Project: pulumi.String(testProject),
		Region:  pulumi.String("europe-west1"),
		Plan:    plan,
		Service: ConsumerServiceArgs{
			Image: pulumi.String("europe-docker.pkg.dev/acme-prod/oncegate/worker:v1"),
			Env:   map[string]pulumi.StringInput{"SUPPLIER_URL": pulumi.String("https://supplier.example")},
		},
		TTLPolicy: ConsumerTTLArgs{CreateDatabase: &DatabaseArgs{LocationID: pulumi.String("eur3")}},
	}
}

// outputs collects a Consumer's outputs once they resolve.
type outputs struct {
	mu   sync.Mutex
	strs map[string]string
	plan map[string]string
}

// snapshot returns copies of the collected outputs, under the lock the apply
// callbacks write with.
func (o *outputs) snapshot() (map[string]string, map[string]string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.strs), maps.Clone(o.plan)
}

func newConsumer(args *ConsumerArgs) (*mocks, *outputs, error) {
	o := &outputs{strs: map[string]string{}}
	m, err := run(func(ctx *pulumi.Context) error {
		c, err := NewConsumer(ctx, "orders", args)
		if err != nil {
			return err
		}
		for k, v := range map[string]pulumi.StringOutput{
			"topic": c.TopicName, "sub": c.SubscriptionName, "dlq": c.DeadLetterTopicName, "dlqSub": c.DeadLetterSubscriptionName,
			"url": c.ServiceURL, "service": c.ServiceName, "push": c.PushServiceAccountEmail, "runtime": c.RuntimeServiceAccountEmail,
			"audience": c.Audience, "backend": c.Backend, "database": c.Database, "kind": c.Kind,
			"ttlEnable": c.TTLEnableCommand, "ttlCheck": c.TTLCheckCommand,
		} {
			v.ApplyT(func(s string) string { o.mu.Lock(); o.strs[k] = s; o.mu.Unlock(); return s })
		}
		c.Plan.ApplyT(func(p map[string]string) map[string]string { o.mu.Lock(); o.plan = p; o.mu.Unlock(); return p })
		return nil
	})
	return m, o, err
}

const (
	consumerPush = "orders-push@" + testProject + ".iam.gserviceaccount.com"
	consumerAud  = "oncegate/" + testProject + "/orders"
)

func TestConsumer(t *testing.T) {
	m, o, err := newConsumer(consumerArgs())
	if err != nil {
		t.Fatal(err)
	}
	checkFamily(t, m, "orders")
	checkNoField(t, m)

	topic := m.one(t, "gcp:pubsub/topic:Topic", "orders-topic")
	sub := m.one(t, "gcp:pubsub/subscription:Subscription", "orders-push-sub")
	svc := m.one(t, "gcp:cloudrunv2/service:Service", "orders-service-service")
	uri := "https://orders-service-service-abc123-ew.a.run.app"

	// The subscription reads the created topic and pushes to the service, as
	// the push account, which alone may invoke it, with the audience the
	// service accepts and the runtime checks.
	wantStr(t, sub, "topic", "orders-topic")
	wantStr(t, sub, "pushConfig.pushEndpoint", uri)
	wantStr(t, sub, "pushConfig.oidcToken.audience", consumerAud)
	wantStr(t, sub, "pushConfig.oidcToken.serviceAccountEmail", consumerPush)
	wantStr(t, svc, "customAudiences.0", consumerAud)
	wantStr(t, sub, "retryPolicy.minimumBackoff", "12s")
	if got := num(t, sub, "deadLetterPolicy.maxDeliveryAttempts"); got != 15 {
		t.Errorf("maxDeliveryAttempts = %d, want 15", got)
	}
	inv := m.one(t, "gcp:cloudrunv2/serviceIamMember:ServiceIamMember", "orders-push-invoker")
	wantStr(t, inv, "name", "orders-service-service")
	wantStr(t, inv, "location", "europe-west1")
	wantStr(t, inv, "member", "serviceAccount:"+consumerPush)
	if !strings.HasSuffix(inv.deletedWith, "::orders-service-service") {
		t.Errorf("invoker deletedWith = %q, want the service (a replaced service starts with an empty policy)", inv.deletedWith)
	}
	if n := len(m.of("gcp:cloudrunv2/serviceIamMember:ServiceIamMember")); n != 1 {
		t.Errorf("%d invoker grants, want exactly the push account's", n)
	}
	// One service agent, from ServiceIdentity, used by every grant.
	if n := len(m.of("gcp:projects/serviceIdentity:ServiceIdentity")); n != 1 {
		t.Errorf("%d service identities, want 1", n)
	}
	wantStr(t, m.one(t, "gcp:pubsub/topicIAMMember:TopicIAMMember", "orders-push-dlq-publisher"), "member", testAgent)

	// The service carries the very plan the subscription was sized with, and
	// the push identity.
	want := contractFor(plan.WithDefaults(), "orders", DefaultKind, "(default)")
	want = append(want[:5:5], append([]string{"ONCEGATE_OIDC_AUDIENCE=" + consumerAud, "ONCEGATE_OIDC_SERVICE_ACCOUNT=" + consumerPush}, want[5:]...)...)
	want = append(want, "SUPPLIER_URL=https://supplier.example")
	if got := envOf(t, svc); joined(got) != joined(want) {
		t.Errorf("env:\n%s\nwant:\n%s", joined(got), joined(want))
	}
	wantStr(t, svc, "template.timeout", "300s")
	wantStr(t, svc, "ingress", "INGRESS_TRAFFIC_INTERNAL_ONLY")

	// The database is created in Datastore mode and the service waits for it.
	wantStr(t, m.one(t, "gcp:firestore/database:Database", "orders-ttl-db"), "type", "DATASTORE_MODE")
	if !m.dependsOn(t, svc, "orders-ttl-db") {
		t.Errorf("the service does not wait for its database")
	}

	// Every cloud resource waits for the APIs.
	for _, r := range m.res {
		if !r.custom || r.typ == "gcp:projects/service:Service" {
			continue
		}
		if !m.dependsOn(t, r, "orders-apis-pubsub") || !m.dependsOn(t, r, "orders-apis-run") {
			t.Errorf("%s %q does not wait for the APIs", r.typ, r.name)
		}
	}
	var apis []string
	for _, r := range m.of("gcp:projects/service:Service") {
		apis = append(apis, str(t, r, "service"))
	}
	slices.Sort(apis) // registered concurrently, in any order
	if w := "datastore.googleapis.com firestore.googleapis.com iam.googleapis.com logging.googleapis.com monitoring.googleapis.com pubsub.googleapis.com run.googleapis.com"; strings.Join(apis, " ") != w {
		t.Errorf("APIs = %v, want %s", apis, w)
	}
	if !m.dependsOn(t, topic, "orders-apis-iam") {
		t.Errorf("topic does not wait for the APIs")
	}

	// Alerts are on by default.
	if n := len(m.of("gcp:monitoring/alertPolicy:AlertPolicy")); n != 4 {
		t.Errorf("%d alert policies, want 4", n)
	}

	// Outputs: names, URL, the plan, the TTL commands.
	wantOut := map[string]string{
		"topic": "orders-topic", "sub": "orders-push-sub", "dlq": "orders-push-dlq", "dlqSub": "orders-push-dlq-sub",
		"url": uri, "service": "orders-service-service", "push": consumerPush, "audience": consumerAud,
		"runtime": "orders-service-run@" + testProject + ".iam.gserviceaccount.com", "backend": "datastore",
		"database": "(default)", "kind": DefaultKind,
		"ttlEnable": "oncegate ttl enable --project acme-prod --database '(default)' --kind OncegateRecord",
		"ttlCheck":  "oncegate ttl check --project acme-prod --database '(default)' --kind OncegateRecord",
	}
	strs, planOut := o.snapshot()
	if !maps.Equal(strs, wantOut) {
		t.Errorf("outputs = %v\nwant %v", strs, wantOut)
	}
	if !maps.Equal(planOut, plan.Env()) {
		t.Errorf("plan output = %v, want %v", planOut, plan.Env())
	}
}

func TestConsumerExistingInfra(t *testing.T) {
	args := consumerArgs()
	args.SkipServices = true
	args.Alerts.Disabled = true
	args.Topic.Existing = pulumi.String("projects/acme-prod/topics/orders")
	args.Service = ConsumerServiceArgs{Existing: &ExistingService{URL: pulumi.String(runURL), Name: pulumi.String("orders-svc")}}
	args.TTLPolicy = ConsumerTTLArgs{Kind: "Orders", Database: "gates"}
	m, o, err := newConsumer(args)
	if err != nil {
		t.Fatal(err)
	}
	for typ, want := range map[string]int{
		"gcp:projects/service:Service":           0,
		"gcp:cloudrunv2/service:Service":         0,
		"gcp:serviceaccount/account:Account":     1, // the push account only
		"gcp:firestore/database:Database":        0,
		"gcp:firestore/field:Field":              0,
		"gcp:pubsub/topic:Topic":                 1, // the dead-letter topic only
		"gcp:pubsub/subscription:Subscription":   2,
		"gcp:monitoring/alertPolicy:AlertPolicy": 0,
	} {
		if got := len(m.of(typ)); got != want {
			t.Errorf("%d of %s, want %d", got, typ, want)
		}
	}
	sub := m.one(t, "gcp:pubsub/subscription:Subscription", "orders-push-sub")
	wantStr(t, sub, "topic", "projects/acme-prod/topics/orders")
	wantStr(t, sub, "pushConfig.pushEndpoint", runURL)
	wantStr(t, sub, "pushConfig.oidcToken.audience", runURL)
	inv := m.one(t, "gcp:cloudrunv2/serviceIamMember:ServiceIamMember", "orders-push-invoker")
	wantStr(t, inv, "name", "orders-svc")
	wantStr(t, inv, "location", "europe-west1")
	strs, _ := o.snapshot()
	if strs["runtime"] != "" || strs["service"] != "orders-svc" || strs["url"] != runURL || strs["topic"] != "projects/acme-prod/topics/orders" ||
		!strings.Contains(strs["ttlEnable"], "--database 'gates' --kind Orders") {
		t.Errorf("outputs = %v", strs)
	}

	// Without a name, the grant must be declared made elsewhere.
	args.Service.Existing = &ExistingService{URL: pulumi.String(runURL), InvokerGrantedElsewhere: true}
	m, o, err = newConsumer(args)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.of("gcp:cloudrunv2/serviceIamMember:ServiceIamMember")); n != 0 {
		t.Errorf("%d invoker grants although granted elsewhere", n)
	}
	if strs, _ := o.snapshot(); strs["service"] != "" {
		t.Errorf("service output = %q, want empty", strs["service"])
	}
}

// TestConsumerBackends wires Redis and SQL from the same plan: the same
// subscription numbers, the backend's variables, the APIs it needs, no
// Datastore database or TTL commands.
func TestConsumerBackends(t *testing.T) {
	vpc := &VPCArgs{Network: pulumi.String("projects/acme-prod/global/networks/default"), Subnetwork: pulumi.String("run-egress")}
	tests := []struct {
		name    string
		backend BackendArgs
		vpc     *VPCArgs
		env     string
		apis    []string
	}{
		{"redis", BackendArgs{Redis: &RedisBackendArgs{}}, vpc, "ONCEGATE_REDIS_ADDR=secret:orders-service-redis-addr@latest",
			[]string{"redis.googleapis.com", "compute.googleapis.com", "secretmanager.googleapis.com"}},
		{"sql", BackendArgs{SQL: &SQLBackendArgs{Instance: pulumi.String("acme-prod:europe-west1:gates"), DSN: SecretRef{Secret: pulumi.String("gates-dsn")}}}, nil,
			"ONCEGATE_SQL_DSN=secret:gates-dsn@latest", []string{"sqladmin.googleapis.com", "secretmanager.googleapis.com"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := consumerArgs()
			args.TTLPolicy = ConsumerTTLArgs{}
			args.Service.Backend, args.Service.VPC = tt.backend, tt.vpc
			m, o, err := newConsumer(args)
			if err != nil {
				t.Fatal(err)
			}
			svc := m.one(t, "gcp:cloudrunv2/service:Service", "orders-service-service")
			env := joined(envOf(t, svc))
			for _, kv := range []string{"ONCEGATE_BACKEND=" + tt.name, tt.env, "ONCEGATE_OIDC_AUDIENCE=" + consumerAud, joined(planEnvFor(plan.WithDefaults()))} {
				if !strings.Contains(env, kv) {
					t.Errorf("env lacks %s:\n%s", kv, env)
				}
			}
			if strings.Contains(env, "DATASTORE") {
				t.Errorf("env carries Datastore variables:\n%s", env)
			}
			if n := len(m.of("gcp:firestore/database:Database")); n != 0 {
				t.Errorf("%d Firestore databases for %s", n, tt.name)
			}
			sub := m.one(t, "gcp:pubsub/subscription:Subscription", "orders-push-sub")
			if got := num(t, sub, "deadLetterPolicy.maxDeliveryAttempts"); got != plan.WithDefaults().MaxDeliveryAttempts {
				t.Errorf("maxDeliveryAttempts = %d", got)
			}
			apis := map[string]bool{}
			for _, r := range m.of("gcp:projects/service:Service") {
				apis[str(t, r, "service")] = true
			}
			for _, a := range tt.apis {
				if !apis[a] {
					t.Errorf("API %s not enabled: %v", a, apis)
				}
			}
			if apis["firestore.googleapis.com"] {
				t.Errorf("Firestore enabled for %s", tt.name)
			}
			if strs, _ := o.snapshot(); strs["backend"] != tt.name || strs["ttlEnable"] != "" || strs["database"] != "" {
				t.Errorf("outputs = %v", strs)
			}
		})
	}
}

// TestConsumerProductionOptions: CMEK on both topics and the service, storage
// policy, filter, labels, existing runtime account, sizing of the service.
func TestConsumerProductionOptions(t *testing.T) {
	key := "projects/acme-prod/locations/europe-west1/keyRings/r/cryptoKeys/k"
	args := consumerArgs()
	args.KMSKeyName = pulumi.String(key)
	args.Topic.AllowedPersistenceRegions = []string{"europe-west1", "europe-west4"}
	args.Subscription.Filter = `attributes.kind = "order"`
	args.Labels = pulumi.StringMap{"team": pulumi.String("payments")}
	args.Service.ServiceAccountEmail = pulumi.String("gateway@acme-prod.iam.gserviceaccount.com")
	args.Service.CPU, args.Service.Memory, args.Service.HealthPath, args.Service.Concurrency = "2", "1Gi", "/healthz", 20
	m, _, err := newConsumer(args)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"orders-topic", "orders-push-dlq"} {
		tp := m.one(t, "gcp:pubsub/topic:Topic", name)
		wantStr(t, tp, "kmsKeyName", key)
		wantStr(t, tp, "messageStoragePolicy.allowedPersistenceRegions.1", "europe-west4")
		wantStr(t, tp, "labels.team", "payments")
	}
	grant := m.one(t, "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember", "orders-topic-kms")
	wantStr(t, grant, "cryptoKeyId", key)
	wantStr(t, grant, "member", testAgent)
	if !m.dependsOn(t, m.one(t, "gcp:pubsub/topic:Topic", "orders-topic"), "orders-topic-kms") {
		t.Errorf("the topic does not wait for the agent's key grant")
	}
	svc := m.one(t, "gcp:cloudrunv2/service:Service", "orders-service-service")
	wantStr(t, svc, "template.encryptionKey", key)
	wantStr(t, svc, "template.serviceAccount", "gateway@acme-prod.iam.gserviceaccount.com")
	wantStr(t, svc, "template.containers.0.resources.limits.memory", "1Gi")
	wantStr(t, svc, "template.containers.0.startupProbe.httpGet.path", "/healthz")
	wantStr(t, m.one(t, "gcp:pubsub/subscription:Subscription", "orders-push-sub"), "filter", `attributes.kind = "order"`)
	if n := len(m.of("gcp:serviceaccount/account:Account")); n != 1 {
		t.Errorf("%d accounts created, want only the push account", n)
	}
}

func TestConsumerRefusesUnsafePlan(t *testing.T) {
	// An unrenewed 15-minute lease at a 5 s minimum backoff needs 183
	// attempts, over Pub/Sub's cap.
	args := consumerArgs()
	args.Plan = sizing.Plan{Lease: 15 * time.Minute, WorkDeadline: 9 * time.Minute, MinBackoff: 5 * time.Second}
	m, _, err := newConsumer(args)
	if !errors.Is(err, sizing.ErrUnsafePlan) {
		t.Fatalf("error = %v, want sizing.ErrUnsafePlan", err)
	}
	want := `consumer "orders": sizing: Dead-letter max delivery attempts 100 cannot cover a wait of 15m behind a crashed holder (the lease): ` +
		"with every retry at the 5s minimum backoff it needs 183, over Pub/Sub's cap of 100 (invariant 3); " +
		"raise the minimum backoff to at least 10s with 100 attempts, or shorten the lease"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
	if len(m.res) != 0 {
		t.Errorf("%d resources registered for an unsafe plan", len(m.res))
	}
}

// TestConsumerRefusesBeforeAnyResource: every input a child would refuse is
// refused by the consumer before its first resource (a `pulumi up` would
// otherwise create APIs, topic, database and service first).
func TestConsumerRefusesBeforeAnyResource(t *testing.T) {
	tests := []struct {
		name string
		edit func(*ConsumerArgs)
		msg  string
	}{
		{"no project", func(a *ConsumerArgs) { a.Project = nil }, "Project is required"},
		{"no image", func(a *ConsumerArgs) { a.Service.Image = nil }, "Service.Image and Region are required"},
		{"no region", func(a *ConsumerArgs) { a.Region = nil }, "Service.Image and Region are required"},
		{"existing without URL", func(a *ConsumerArgs) { a.Service = ConsumerServiceArgs{Existing: &ExistingService{}} }, "Service.Existing.URL is required"},
		{"existing with image", func(a *ConsumerArgs) {
			a.Service.Existing = &ExistingService{URL: pulumi.String(runURL), Name: pulumi.String("s")}
		},
			"Service.Image and Service.Existing exclude each other"},
		{"existing without name", func(a *ConsumerArgs) {
			a.Service = ConsumerServiceArgs{Existing: &ExistingService{URL: pulumi.String(runURL)}}
		}, "roles/run.invoker (without it every push is answered 403)"},
		{"existing without location", func(a *ConsumerArgs) {
			a.Region = nil
			a.Service = ConsumerServiceArgs{Existing: &ExistingService{URL: pulumi.String(runURL), Name: pulumi.String("s")}}
		}, "Service.Existing.Location or Region is required"},
		{"short dead-letter retention", func(a *ConsumerArgs) { a.DeadLetter.Retention = 5 * time.Minute }, "DeadLetter.Retention must be 10m–744h (got 5m0s)"},
		{"bad push account id", func(a *ConsumerArgs) { a.Subscription.PushServiceAccount.AccountID = "Bad_ID" }, "PushServiceAccount.AccountID"},
		{"bad runtime account id", func(a *ConsumerArgs) { a.Service.ServiceAccountID = "x" }, "ServiceAccountID"},
		{"unknown ingress", func(a *ConsumerArgs) { a.Service.Ingress = "INTERNAL" }, `Ingress "INTERNAL" is not one of`},
		{"env owned by the contract", func(a *ConsumerArgs) { a.Service.Env["ONCEGATE_TTL"] = pulumi.String("1h") }, "Env ONCEGATE_TTL"},
		{"entity groups", func(a *ConsumerArgs) { a.TTLPolicy.CreateDatabase.ConcurrencyMode = "OPTIMISTIC_WITH_ENTITY_GROUPS" }, "does not support TTL policies"},
		{"database for redis", func(a *ConsumerArgs) {
			a.Service.Backend.Redis = &RedisBackendArgs{}
			a.Service.VPC = &VPCArgs{Network: pulumi.String("n"), Subnetwork: pulumi.String("s")}
		}, "TTLPolicy.CreateDatabase is for the Datastore backend"},
		{"redis without vpc", func(a *ConsumerArgs) { a.TTLPolicy = ConsumerTTLArgs{}; a.Service.Backend.Redis = &RedisBackendArgs{} }, "Backend.Redis needs VPC"},
		{"bad region", func(a *ConsumerArgs) { a.Topic.AllowedPersistenceRegions = []string{"eu"} }, `"eu" is not a region`},
		{"ack deadline", func(a *ConsumerArgs) { a.Plan.AckDeadline = 5 * time.Second }, "Subscription ack deadline must be 10s–600s"},
		{"ttl under the redelivery horizon", func(a *ConsumerArgs) { a.Plan.TTL = time.Millisecond }, "invariant 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := consumerArgs()
			tt.edit(args)
			m, _, err := newConsumer(args)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.msg)
			}
			if len(m.res) != 0 {
				t.Errorf("%d resources registered before the error", len(m.res))
			}
		})
	}
}
