package components

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/sizing"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// plan is the plan the component tests deploy: a 60 s lease renewed every
// 20 s around 60 s of work, 12 s minimum backoff.
var plan = sizing.Plan{Lease: time.Minute, Heartbeat: 20 * time.Second, WorkDeadline: time.Minute, MinBackoff: 12 * time.Second}

const (
	pushEmail = "orders-push@" + testProject + ".iam.gserviceaccount.com"
	runURL    = "https://orders-xyz-ew.a.run.app"
)

func newPush(args *PushSubscriptionArgs) (*mocks, error) {
	return run(func(ctx *pulumi.Context) error {
		_, err := NewPushSubscription(ctx, "orders", args)
		return err
	})
}

func pushArgs() *PushSubscriptionArgs {
	return &PushSubscriptionArgs{
		Project: pulumi.String(testProject),
		Topic:   pulumi.String("orders-in"),
		Plan:    plan,
		Endpoint: PushEndpointArgs{
			URL:             pulumi.String(runURL),
			ServiceName:     pulumi.String("orders-svc"),
			ServiceLocation: pulumi.String("europe-west1"),
		},
	}
}

func TestPushSubscription(t *testing.T) {
	m, err := newPush(pushArgs())
	if err != nil {
		t.Fatal(err)
	}
	r := plan.WithDefaults()
	if r.MaxDeliveryAttempts != 15 || r.AckDeadline != 66*time.Second {
		t.Fatalf("test plan resolved to %+v", r)
	}

	// The push subscription: retry policy, ack deadline, dead letters, OIDC.
	sub := m.one(t, "gcp:pubsub/subscription:Subscription", "orders-sub")
	wantStr(t, sub, "topic", "orders-in")
	if got := num(t, sub, "ackDeadlineSeconds"); got != 66 {
		t.Errorf("ackDeadlineSeconds = %d, want 66 (the time budget, invariant 5)", got)
	}
	wantStr(t, sub, "retryPolicy.minimumBackoff", "12s")
	wantStr(t, sub, "retryPolicy.maximumBackoff", "600s")
	wantStr(t, sub, "deadLetterPolicy.deadLetterTopic", "projects/"+testProject+"/topics/orders-dlq")
	if got := num(t, sub, "deadLetterPolicy.maxDeliveryAttempts"); got != r.MaxDeliveryAttempts {
		t.Errorf("maxDeliveryAttempts = %d, want the plan's %d", got, r.MaxDeliveryAttempts)
	}
	wantStr(t, sub, "pushConfig.pushEndpoint", runURL)
	wantStr(t, sub, "pushConfig.oidcToken.serviceAccountEmail", pushEmail)
	wantStr(t, sub, "pushConfig.oidcToken.audience", runURL)
	wantStr(t, sub, "expirationPolicy.ttl", "")
	for _, dep := range []string{"orders-dlq-publisher", "orders-token-creator", "orders-invoker", "orders-dlq-sub"} {
		if !m.dependsOn(t, sub, dep) {
			t.Errorf("subscription does not wait for %s", dep)
		}
	}

	// The dead-letter topic and its long-retention, never-expiring subscription.
	m.one(t, "gcp:pubsub/topic:Topic", "orders-dlq")
	dlqSub := m.one(t, "gcp:pubsub/subscription:Subscription", "orders-dlq-sub")
	wantStr(t, dlqSub, "topic", "orders-dlq")
	wantStr(t, dlqSub, "messageRetentionDuration", "2678400s")
	wantStr(t, dlqSub, "expirationPolicy.ttl", "")
	if has(dlqSub, "pushConfig") {
		t.Errorf("dead-letter subscription pushes; it must be a pull subscription")
	}

	// The push identity.
	sa := m.one(t, "gcp:serviceaccount/account:Account", "orders-push-sa")
	wantStr(t, sa, "accountId", "orders-push")
	wantStr(t, sa, "project", testProject)

	// Every IAM member and role, and nothing else.
	pub := m.one(t, "gcp:pubsub/topicIAMMember:TopicIAMMember", "orders-dlq-publisher")
	wantStr(t, pub, "topic", "orders-dlq")
	wantStr(t, pub, "role", "roles/pubsub.publisher")
	wantStr(t, pub, "member", testAgent)
	subIAM := m.one(t, "gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember", "orders-sub-subscriber")
	wantStr(t, subIAM, "subscription", "orders-sub")
	wantStr(t, subIAM, "role", "roles/pubsub.subscriber")
	wantStr(t, subIAM, "member", testAgent)
	tok := m.one(t, "gcp:serviceaccount/iAMMember:IAMMember", "orders-token-creator")
	wantStr(t, tok, "serviceAccountId", "projects/"+testProject+"/serviceAccounts/"+pushEmail)
	wantStr(t, tok, "role", "roles/iam.serviceAccountTokenCreator")
	wantStr(t, tok, "member", testAgent)
	inv := m.one(t, "gcp:cloudrunv2/serviceIamMember:ServiceIamMember", "orders-invoker")
	wantStr(t, inv, "name", "orders-svc")
	wantStr(t, inv, "location", "europe-west1")
	wantStr(t, inv, "role", "roles/run.invoker")
	wantStr(t, inv, "member", "serviceAccount:"+pushEmail)
	iam := len(m.of("gcp:pubsub/topicIAMMember:TopicIAMMember")) + len(m.of("gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember")) +
		len(m.of("gcp:serviceaccount/iAMMember:IAMMember")) + len(m.of("gcp:cloudrunv2/serviceIamMember:ServiceIamMember")) +
		len(m.of("gcp:projects/iAMMember:IAMMember"))
	if iam != 4 {
		t.Errorf("%d IAM members, want 4", iam)
	}
	if len(m.res) != 10 {
		t.Errorf("%d resources registered, want 10 (component, agent, account, 4 IAM members, topic, 2 subscriptions)", len(m.res))
	}
	// The service agent comes from ServiceIdentity (it may not exist yet on a
	// fresh project), not from a Cloud Resource Manager lookup.
	wantStr(t, m.one(t, "gcp:projects/serviceIdentity:ServiceIdentity", "orders-agent"), "service", "pubsub.googleapis.com")
	if len(m.calls) != 0 {
		t.Errorf("invokes = %q, want none", m.calls)
	}
	// Each grant is replaced with the resource it is on.
	for grant, on := range map[string]string{"orders-sub-subscriber": "orders-sub", "orders-dlq-publisher": "orders-dlq", "orders-token-creator": "orders-push-sa"} {
		var r rec
		for _, x := range m.res {
			if x.name == grant {
				r = x
			}
		}
		if !strings.HasSuffix(r.deletedWith, "::"+on) {
			t.Errorf("%s: deletedWith = %q, want the URN of %s", grant, r.deletedWith, on)
		}
	}
	if has(sub, "filter") {
		t.Errorf("filter set without being asked")
	}
	checkFamily(t, m, "orders")
}

func TestPushSubscriptionExistingIdentity(t *testing.T) {
	args := pushArgs()
	args.ServiceAgentEmail = pulumi.String("service-42@gcp-sa-pubsub.iam.gserviceaccount.com")
	args.PushServiceAccount.Email = pulumi.String("pusher@elsewhere.iam.gserviceaccount.com")
	args.Endpoint.ServiceName, args.Endpoint.ServiceLocation = nil, nil
	args.Endpoint.InvokerGrantedElsewhere = true
	args.Filter = `attributes.type = "order"`
	args.KMSKeyName = pulumi.String("projects/acme-prod/locations/europe-west1/keyRings/r/cryptoKeys/k")
	args.AllowedPersistenceRegions = []string{"europe-west1"}
	args.Endpoint.Audience = pulumi.String("https://audience.example")
	args.DeadLetter.Retention = 7 * 24 * time.Hour
	m, err := newPush(args)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.of("gcp:serviceaccount/account:Account")); n != 0 {
		t.Errorf("%d accounts created for an existing identity", n)
	}
	if n := len(m.of("gcp:cloudrunv2/serviceIamMember:ServiceIamMember")); n != 0 {
		t.Errorf("invoker granted without a service name")
	}
	if n := len(m.of("gcp:projects/serviceIdentity:ServiceIdentity")); n != 0 {
		t.Errorf("service agent created although its email was given")
	}
	tok := m.one(t, "gcp:serviceaccount/iAMMember:IAMMember", "orders-token-creator")
	wantStr(t, tok, "serviceAccountId", "projects/"+testProject+"/serviceAccounts/pusher@elsewhere.iam.gserviceaccount.com")
	wantStr(t, tok, "member", "serviceAccount:service-42@gcp-sa-pubsub.iam.gserviceaccount.com")
	sub := m.one(t, "gcp:pubsub/subscription:Subscription", "orders-sub")
	wantStr(t, sub, "pushConfig.oidcToken.serviceAccountEmail", "pusher@elsewhere.iam.gserviceaccount.com")
	wantStr(t, sub, "pushConfig.oidcToken.audience", "https://audience.example")
	wantStr(t, m.one(t, "gcp:pubsub/subscription:Subscription", "orders-dlq-sub"), "messageRetentionDuration", "604800s")
	wantStr(t, sub, "filter", `attributes.type = "order"`)
	// CMEK and storage policy on the dead-letter topic, after the agent may use the key.
	dlq := m.one(t, "gcp:pubsub/topic:Topic", "orders-dlq")
	wantStr(t, dlq, "kmsKeyName", "projects/acme-prod/locations/europe-west1/keyRings/r/cryptoKeys/k")
	wantStr(t, dlq, "messageStoragePolicy.allowedPersistenceRegions.0", "europe-west1")
	kms := m.one(t, "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember", "orders-dlq-kms")
	wantStr(t, kms, "role", "roles/cloudkms.cryptoKeyEncrypterDecrypter")
	wantStr(t, kms, "member", "serviceAccount:service-42@gcp-sa-pubsub.iam.gserviceaccount.com")
	if !m.dependsOn(t, dlq, "orders-dlq-kms") {
		t.Errorf("the dead-letter topic does not wait for its key grant")
	}
}

func TestPushSubscriptionRefuses(t *testing.T) {
	tests := []struct {
		name string
		edit func(*PushSubscriptionArgs)
		msg  string
	}{
		{"unsafe plan", func(a *PushSubscriptionArgs) { a.Plan.MaxDeliveryAttempts = 6 },
			"Dead-letter max delivery attempts 6 cannot cover a wait of 2m20s"},
		{"ack deadline below Pub/Sub's minimum", func(a *PushSubscriptionArgs) { a.Plan.AckDeadline = 5 * time.Second },
			"Subscription ack deadline must be 10s–600s (got 5s); raise it or leave zero for the default"},
		{"no topic", func(a *PushSubscriptionArgs) { a.Topic = nil }, "Topic"},
		{"no endpoint", func(a *PushSubscriptionArgs) { a.Endpoint.URL = nil }, "Endpoint.URL"},
		{"short retention", func(a *PushSubscriptionArgs) { a.DeadLetter.Retention = time.Minute }, "DeadLetter.Retention must be 10m–744h (got 1m0s)"},
		{"bad account id", func(a *PushSubscriptionArgs) { a.PushServiceAccount.AccountID = "Bad_ID" }, "PushServiceAccount.AccountID"},
		{"no invoker grant", func(a *PushSubscriptionArgs) { a.Endpoint.ServiceName, a.Endpoint.ServiceLocation = nil, nil },
			"Endpoint.ServiceName and ServiceLocation are required so the push account gets roles/run.invoker"},
		{"name without location", func(a *PushSubscriptionArgs) { a.Endpoint.ServiceLocation = nil }, "go together"},
		{"grant both ways", func(a *PushSubscriptionArgs) { a.Endpoint.InvokerGrantedElsewhere = true }, "contradicts"},
		{"bad region", func(a *PushSubscriptionArgs) { a.AllowedPersistenceRegions = []string{"Europe"} }, `"Europe" is not a region`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := pushArgs()
			tt.edit(args)
			m, err := newPush(args)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.msg)
			}
			if len(m.res) != 0 {
				t.Errorf("%d resources registered before the error", len(m.res))
			}
			if strings.HasPrefix(tt.name, "unsafe") || strings.HasPrefix(tt.name, "ack") {
				if !errors.Is(err, sizing.ErrUnsafePlan) {
					t.Errorf("error does not match sizing.ErrUnsafePlan")
				}
			}
		})
	}
}
