package stack

import (
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oncegate/oncegate/sizing"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func lookup(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

var gcpCfg = lookup(map[string]string{"project": "acme-prod", "region": "europe-west1"})

func TestReadSettingsDefaults(t *testing.T) {
	s, err := readSettings(lookup(map[string]string{"image": "worker:v1", "supplierUrl": "https://supplier.example"}), gcpCfg)
	if err != nil {
		t.Fatal(err)
	}
	want := sizing.Plan{Lease: time.Minute, Heartbeat: 20 * time.Second, WorkDeadline: time.Minute}
	if s.args.Plan != want || s.name != "oncegate" {
		t.Errorf("plan %+v name %q, want %+v oncegate", s.args.Plan, s.name, want)
	}
	if err := s.args.Plan.Validate(); err != nil {
		t.Errorf("the default plan is unsafe: %v", err)
	}
	if s.args.TTLPolicy.CreateDatabase != nil || s.args.Topic.Existing != nil || s.args.SkipServices || s.args.Alerts.Disabled ||
		s.args.Service.Backend.Redis != nil || s.args.Service.Backend.SQL != nil || s.args.Service.HealthPath != "/healthz" {
		t.Errorf("defaults create a database, reuse a topic, skip APIs or alerts, leave Datastore or the worker's probe: %+v", s.args)
	}
}

func TestReadSettingsFull(t *testing.T) {
	s, err := readSettings(lookup(map[string]string{
		"image": "worker:v1", "name": "orders", "namespace": "orders-v1",
		"lease": "15m", "heartbeat": "0s", "workDeadline": "10m", "ttl": "24h", "shutdownGrace": "10s",
		"ackDeadline": "600s", "minBackoff": "10s", "maxBackoff": "10m", "maxDeliveryAttempts": "93", "requestTimeout": "11m",
		"createDatabase": "true", "databaseLocation": "eur3", "concurrencyMode": "OPTIMISTIC", "kind": "Orders", "database": "gates",
		"existingTopic": "projects/acme-prod/topics/orders", "supplierUrl": "https://supplier.example", "concurrency": "4",
		"maxInstances": "10", "skipServices": "true", "deletionProtection": "true", "kmsKeyName": "projects/p/locations/l/keyRings/r/cryptoKeys/k",
		"allowedPersistenceRegions": "europe-west1, europe-west4", "subscriptionFilter": `attributes.kind = "order"`, "cpu": "2", "memory": "1Gi",
		"runtimeServiceAccount": "gw@acme-prod.iam.gserviceaccount.com", "ingress": "INGRESS_TRAFFIC_ALL", "disableAlerts": "true",
		"vpcNetwork": "default", "vpcSubnetwork": "run", "backend": "redis", "redisAddrSecret": "redis-url", "minInstances": "1",
	}), gcpCfg)
	if err != nil {
		t.Fatal(err)
	}
	want := sizing.Plan{Lease: 15 * time.Minute, WorkDeadline: 10 * time.Minute, TTL: 24 * time.Hour, ShutdownGrace: 10 * time.Second,
		AckDeadline: 600 * time.Second, MinBackoff: 10 * time.Second, MaxBackoff: 10 * time.Minute, MaxDeliveryAttempts: 93, RequestTimeout: 11 * time.Minute}
	a := s.args
	if a.Plan != want {
		t.Errorf("plan %+v\nwant %+v", a.Plan, want)
	}
	if s.name != "orders" || a.Namespace != "orders-v1" || a.TTLPolicy.Kind != "Orders" || a.TTLPolicy.Database != "gates" ||
		a.TTLPolicy.CreateDatabase == nil || a.TTLPolicy.CreateDatabase.ConcurrencyMode != "OPTIMISTIC" ||
		a.Topic.Existing == nil || a.Service.Env["SUPPLIER_URL"] == nil || a.Service.Concurrency != 4 || a.Service.MaxInstances != 10 ||
		!a.SkipServices || !a.Service.DeletionProtection || a.KMSKeyName == nil || len(a.Topic.AllowedPersistenceRegions) != 2 ||
		a.Subscription.Filter == "" || a.Service.CPU != "2" || a.Service.Memory != "1Gi" || a.Service.ServiceAccountEmail == nil ||
		a.Service.Ingress != "INGRESS_TRAFFIC_ALL" || !a.Alerts.Disabled || a.Service.VPC == nil || a.Service.MinInstances != 1 ||
		a.Service.Backend.Redis == nil || a.Service.Backend.Redis.Addr == nil {
		t.Errorf("settings not carried over: %+v", a)
	}
}

func TestReadSettingsErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  map[string]string
		gcp  map[string]string
		msgs []string
	}{
		{"nothing set", nil, nil, []string{"config gcp:project is not set", "config oncegate:image is not set", "config oncegate:supplierUrl"}},
		{"no supplier", map[string]string{"image": "w"}, nil, []string{`config oncegate:supplierUrl "" must be the http(s) URL`}},
		{"unknown backend", map[string]string{"image": "w", "supplierUrl": "https://s", "backend": "mongo"}, nil,
			[]string{`oncegate:backend: "mongo" is malformed; want datastore, redis or sql`}},
		{"sql without instance", map[string]string{"image": "w", "supplierUrl": "https://s", "backend": "sql"}, nil, []string{"oncegate:sqlInstance"}},
		{"half a vpc", map[string]string{"image": "w", "supplierUrl": "https://s", "vpcNetwork": "default"}, nil, []string{"vpcNetwork and oncegate:vpcSubnetwork go together"}},
		{"bare seconds", map[string]string{"image": "w", "lease": "60"}, nil,
			[]string{`config oncegate:lease: "60" is malformed; want a Go duration such as 60s, 1m30s or 15m`}},
		{"bad attempts and bool", map[string]string{"image": "w", "maxDeliveryAttempts": "many", "skipServices": "yes please"}, nil,
			[]string{`oncegate:maxDeliveryAttempts: "many"`, `oncegate:skipServices: "yes please" is malformed; want true or false`}},
		{"database without location", map[string]string{"image": "w", "createDatabase": "true"}, nil, []string{"databaseLocation is not set"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gcp := gcpCfg
			if tt.name == "nothing set" {
				gcp = lookup(tt.gcp)
			}
			_, err := readSettings(lookup(tt.cfg), gcp)
			if err == nil {
				t.Fatal("no error")
			}
			for _, msg := range tt.msgs {
				if !strings.Contains(err.Error(), msg) {
					t.Errorf("error %q lacks %q", err, msg)
				}
			}
		})
	}
}

// counter is a mock that counts resources by type.
type counter struct {
	mu    sync.Mutex
	types map[string]int
}

func (c *counter) NewResource(a pulumi.MockResourceArgs) (string, resource.PropertyMap, error) {
	c.mu.Lock()
	c.types[a.TypeToken]++
	c.mu.Unlock()
	outs := a.Inputs.Copy()
	if a.TypeToken == "gcp:serviceaccount/account:Account" {
		outs["email"] = resource.NewProperty(a.Inputs["accountId"].StringValue() + "@acme-prod.iam.gserviceaccount.com")
	}
	return a.Name + "-id", outs, nil
}

func (c *counter) Call(pulumi.MockCallArgs) (resource.PropertyMap, error) {
	return resource.PropertyMap{"number": resource.NewProperty("123")}, nil
}

func deploy(t *testing.T, cfg map[string]string) (*counter, error) {
	t.Helper()
	all := map[string]string{"gcp:project": "acme-prod", "oncegate:image": "worker:v1", "oncegate:supplierUrl": "https://supplier.example"}
	for k, v := range cfg {
		all["oncegate:"+k] = v
	}
	b, _ := json.Marshal(all)
	t.Setenv("PULUMI_CONFIG", string(b))
	c := &counter{types: map[string]int{}}
	err := pulumi.RunErr(Program, pulumi.WithMocks("oncegate", "dev", c))
	c.mu.Lock() // orders the mock's writes before the test's reads
	defer c.mu.Unlock()
	return c, err
}

func TestProgram(t *testing.T) {
	c, err := deploy(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	for typ, want := range map[string]int{
		"oncegate:gcp:Consumer":                  1,
		"gcp:cloudrunv2/service:Service":         1,
		"gcp:pubsub/subscription:Subscription":   2,
		"gcp:pubsub/topic:Topic":                 2,
		"gcp:firestore/field:Field":              0,
		"gcp:projects/service:Service":           7,
		"gcp:monitoring/alertPolicy:AlertPolicy": 4,
	} {
		if got := c.types[typ]; got != want {
			t.Errorf("%d of %s, want %d", got, typ, want)
		}
	}
}

func TestProgramRefusesUnsafePlan(t *testing.T) {
	c, err := deploy(t, map[string]string{"heartbeat": "0s"}) // a 60 s lease over 60 s of work, unrenewed
	if !errors.Is(err, sizing.ErrUnsafePlan) {
		t.Fatalf("error = %v, want sizing.ErrUnsafePlan", err)
	}
	if !strings.Contains(err.Error(), "Lease 1m must exceed the work deadline 1m when no heartbeat renews it (invariant 1)") {
		t.Errorf("error = %v", err)
	}
	if c.types["gcp:pubsub/topic:Topic"] != 0 {
		t.Errorf("resources registered for an unsafe plan: %v", c.types)
	}
}

// TestExampleKeysAreRead: every oncegate: key Pulumi.example.yaml shows (set or
// commented out) is one the program reads, so the example never documents a
// key that is silently ignored.
func TestExampleKeysAreRead(t *testing.T) {
	b, err := os.ReadFile("../../Pulumi.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]bool{}
	spy := func(k string) string { read[k] = true; return "" }
	_, _ = readSettings(spy, gcpCfg) // errors for the empty config are expected
	for _, b := range []string{"redis", "sql"} {
		_, _ = readSettings(func(k string) string {
			read[k] = true
			if k == "backend" {
				return b
			}
			if k == "createDatabase" {
				return "true"
			}
			return ""
		}, gcpCfg)
	}
	keys := regexp.MustCompile(`(?m)^\s*#?\s*oncegate:([A-Za-z]+):`).FindAllStringSubmatch(string(b), -1)
	if len(keys) < 20 {
		t.Fatalf("found only %d keys in the example", len(keys))
	}
	for _, k := range keys {
		if !read[k[1]] {
			t.Errorf("Pulumi.example.yaml shows oncegate:%s, which the program never reads", k[1])
		}
	}
}
