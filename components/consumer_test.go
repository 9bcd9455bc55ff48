package components

import (
	"errors"
	"maps"
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
			"database": c.Database, "kind": c.Kind,
		} {
			v.ApplyT(func(s string) string { o.mu.Lock(); o.strs[k] = s; o.mu.Unlock(); return s })
		}
		c.Plan.ApplyT(func(p map[string]string) map[string]string { o.mu.Lock(); o.plan = p; o.mu.Unlock(); return p })
		return nil
	})
	return m, o, err
}

func TestConsumer(t *testing.T) {
	m, o, err := newConsumer(consumerArgs())
	if err != nil {
		t.Fatal(err)
	}
	checkFamily(t, m, "orders")

	topic := m.one(t, "gcp:pubsub/topic:Topic", "orders-topic")
	sub := m.one(t, "gcp:pubsub/subscription:Subscription", "orders-push-sub")
	svc := m.one(t, "gcp:cloudrunv2/service:Service", "orders-service-service")
	uri := "https://orders-service-service-abc123-ew.a.run.app"

	// The subscription reads the created topic and pushes to the service, as
	// the push account, which alone may invoke it.
	wantStr(t, sub, "topic", "orders-topic")
	wantStr(t, sub, "pushConfig.pushEndpoint", uri)
	wantStr(t, sub, "pushConfig.oidcToken.audience", uri)
	wantStr(t, sub, "pushConfig.oidcToken.serviceAccountEmail", "orders-push-push@"+testProject+".iam.gserviceaccount.com")
	wantStr(t, sub, "retryPolicy.minimumBackoff", "12s")
	if got := num(t, sub, "deadLetterPolicy.maxDeliveryAttempts"); got != 15 {
		t.Errorf("maxDeliveryAttempts = %d, want 15", got)
	}
	inv := m.one(t, "gcp:cloudrunv2/serviceIamMember:ServiceIamMember", "orders-push-invoker")
	wantStr(t, inv, "name", "orders-service-service")
	wantStr(t, inv, "location", "europe-west1")
	wantStr(t, inv, "member", "serviceAccount:orders-push-push@"+testProject+".iam.gserviceaccount.com")
	if n := len(m.of("gcp:cloudrunv2/serviceIamMember:ServiceIamMember")); n != 1 {
		t.Errorf("%d invoker grants, want exactly the push account's", n)
	}

	// The service carries the very plan the subscription was sized with.
	want := append(contractFor(plan.WithDefaults(), "orders", DefaultKind, "(default)"), "SUPPLIER_URL=https://supplier.example")
	if got := envOf(t, svc); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("env:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantStr(t, svc, "template.timeout", "300s")

	// The database is created in Datastore mode with the TTL field on it, and
	// the service waits for the policy.
	wantStr(t, m.one(t, "gcp:firestore/database:Database", "orders-ttl-db"), "type", "DATASTORE_MODE")
	checkTTLField(t, m, "orders-ttl-field", DefaultKind, "(default)")
	if !m.dependsOn(t, svc, "orders-ttl-field") {
		t.Errorf("the service does not wait for the TTL policy")
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
	if !m.dependsOn(t, topic, "orders-apis-iam") {
		t.Errorf("topic does not wait for the APIs")
	}

	// Outputs: names, URL, the plan.
	wantOut := map[string]string{
		"topic": "orders-topic", "sub": "orders-push-sub", "dlq": "orders-push-dlq", "dlqSub": "orders-push-dlq-sub",
		"url": uri, "service": "orders-service-service", "push": "orders-push-push@" + testProject + ".iam.gserviceaccount.com",
		"runtime": "orders-service-run@" + testProject + ".iam.gserviceaccount.com", "database": "(default)", "kind": DefaultKind,
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
	args.ProjectNumber = pulumi.String(testNumber)
	args.Topic.Existing = pulumi.String("projects/acme-prod/topics/orders")
	args.Service = ConsumerServiceArgs{Existing: &ExistingService{URL: pulumi.String(runURL), Name: pulumi.String("orders-svc")}}
	args.TTLPolicy = ConsumerTTLArgs{Kind: "Orders", Database: "gates"}
	m, o, err := newConsumer(args)
	if err != nil {
		t.Fatal(err)
	}
	for typ, want := range map[string]int{
		"gcp:projects/service:Service":         0,
		"gcp:cloudrunv2/service:Service":       0,
		"gcp:serviceaccount/account:Account":   1, // the push account only
		"gcp:firestore/database:Database":      0,
		"gcp:firestore/field:Field":            1,
		"gcp:pubsub/topic:Topic":               1, // the dead-letter topic only
		"gcp:pubsub/subscription:Subscription": 2,
	} {
		if got := len(m.of(typ)); got != want {
			t.Errorf("%d of %s, want %d", got, typ, want)
		}
	}
	sub := m.one(t, "gcp:pubsub/subscription:Subscription", "orders-push-sub")
	wantStr(t, sub, "topic", "projects/acme-prod/topics/orders")
	wantStr(t, sub, "pushConfig.pushEndpoint", runURL)
	inv := m.one(t, "gcp:cloudrunv2/serviceIamMember:ServiceIamMember", "orders-push-invoker")
	wantStr(t, inv, "name", "orders-svc")
	wantStr(t, inv, "location", "europe-west1")
	checkTTLField(t, m, "orders-ttl-field", "Orders", "gates")
	if len(m.calls) != 0 {
		t.Errorf("project looked up although its number was given")
	}
	if strs, _ := o.snapshot(); strs["runtime"] != "" || strs["service"] != "orders-svc" || strs["url"] != runURL {
		t.Errorf("outputs = %v", strs)
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

func TestConsumerRequiredArgs(t *testing.T) {
	tests := []struct {
		name string
		edit func(*ConsumerArgs)
		msg  string
	}{
		{"no project", func(a *ConsumerArgs) { a.Project = nil }, "Project is required"},
		{"no image", func(a *ConsumerArgs) { a.Service.Image = nil }, "Service.Image and Region are required"},
		{"no region", func(a *ConsumerArgs) { a.Region = nil }, "Service.Image and Region are required"},
		{"existing without URL", func(a *ConsumerArgs) { a.Service.Existing = &ExistingService{} }, "Service.Existing.URL is required"},
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
