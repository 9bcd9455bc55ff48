package stack

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/oncegate/oncegate/components"
	"github.com/oncegate/oncegate/sizing"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// Stack configuration keys, all in the "oncegate" namespace except the
// provider's gcp:project and gcp:region. docs/deploy.md lists them too.
//
// Durations are Go durations ("60s", "15m"); an unset plan key takes the
// sizing package's default, except lease, heartbeat and workDeadline, which
// default to the recommended renewed plan (60s, 20s, 60s). Set heartbeat to
// "0s" for an unrenewed lease.
var durationKeys = []struct {
	key string
	def string
	set func(*sizing.Plan, time.Duration)
}{
	{"lease", "60s", func(p *sizing.Plan, d time.Duration) { p.Lease = d }},
	{"heartbeat", "20s", func(p *sizing.Plan, d time.Duration) { p.Heartbeat = d }},
	{"workDeadline", "60s", func(p *sizing.Plan, d time.Duration) { p.WorkDeadline = d }},
	{"ttl", "", func(p *sizing.Plan, d time.Duration) { p.TTL = d }},
	{"shutdownGrace", "", func(p *sizing.Plan, d time.Duration) { p.ShutdownGrace = d }},
	{"ackDeadline", "", func(p *sizing.Plan, d time.Duration) { p.AckDeadline = d }},
	{"minBackoff", "", func(p *sizing.Plan, d time.Duration) { p.MinBackoff = d }},
	{"maxBackoff", "", func(p *sizing.Plan, d time.Duration) { p.MaxBackoff = d }},
	{"requestTimeout", "", func(p *sizing.Plan, d time.Duration) { p.RequestTimeout = d }},
	{"storeTimeout", "", func(p *sizing.Plan, d time.Duration) { p.StoreTimeout = d }},
	{"deadLetterReplayWindow", "", func(p *sizing.Plan, d time.Duration) { p.DeadLetterReplayWindow = d }},
	{"storeOutage", "", func(p *sizing.Plan, d time.Duration) { p.StoreOutage = d }},
}

// settings are the stack's configuration, read and checked.
type settings struct {
	name string // the consumer's name: config "name", default "oncegate"
	args *components.ConsumerArgs
}

// readSettings reads the stack configuration through get ("oncegate:<key>")
// and gcp ("gcp:<key>"). It returns an error naming the key and the accepted
// form for a missing or malformed value; the plan itself is checked by the
// components, at preview.
func readSettings(get, gcp func(key string) string) (settings, error) {
	var errs []error
	bad := func(key, val, want string) {
		errs = append(errs, fmt.Errorf("config oncegate:%s: %q is malformed; want %s", key, val, want))
	}
	or := func(key, def string) string {
		if v := get(key); v != "" {
			return v
		}
		return def
	}
	boolean := func(key string) bool {
		v, err := strconv.ParseBool(or(key, "false"))
		if err != nil {
			bad(key, get(key), "true or false")
		}
		return v
	}
	integer := func(key string) int {
		v, err := strconv.Atoi(or(key, "0"))
		if err != nil || v < 0 {
			bad(key, get(key), "a whole number, 0 or more")
		}
		return v
	}

	project := gcp("project")
	if project == "" {
		errs = append(errs, errors.New("config gcp:project is not set; run `pulumi config set gcp:project <project-id>`"))
	}
	image := get("image")
	if image == "" {
		errs = append(errs, errors.New("config oncegate:image is not set; run `pulumi config set image <registry>/<repo>/worker:<tag>`"))
	}
	region := or("region", gcp("region"))
	if region == "" {
		region = "us-central1"
	}
	// The reference worker exits at start-up without SUPPLIER_URL, so its
	// revision would never become ready: refuse at preview instead.
	supplier := get("supplierUrl")
	if !strings.HasPrefix(supplier, "https://") && !strings.HasPrefix(supplier, "http://") {
		errs = append(errs, fmt.Errorf("config oncegate:supplierUrl %q must be the http(s) URL the reference worker forwards each message to; run `pulumi config set supplierUrl https://…`", supplier))
	}
	list := func(key string) []string {
		var out []string
		for _, v := range strings.Split(get(key), ",") {
			if v = strings.TrimSpace(v); v != "" {
				out = append(out, v)
			}
		}
		return out
	}

	var plan sizing.Plan
	for _, k := range durationKeys {
		v := or(k.key, k.def)
		if v == "" {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			bad(k.key, v, "a Go duration such as 60s, 1m30s or 15m")
			continue
		}
		k.set(&plan, d)
	}
	plan.MaxDeliveryAttempts = integer("maxDeliveryAttempts")

	args := &components.ConsumerArgs{
		Project:   pulumi.String(project),
		Region:    pulumi.String(region),
		Plan:      plan,
		Namespace: get("namespace"),
		Service: components.ConsumerServiceArgs{
			Image:              pulumi.String(image),
			Concurrency:        integer("concurrency"),
			MinInstances:       integer("minInstances"),
			MaxInstances:       integer("maxInstances"),
			CPU:                get("cpu"),
			Memory:             get("memory"),
			HealthPath:         or("healthPath", "/healthz"),
			Ingress:            get("ingress"),
			DeletionProtection: boolean("deletionProtection"),
			Env:                map[string]pulumi.StringInput{"SUPPLIER_URL": pulumi.String(supplier)},
		},
		TTLPolicy: components.ConsumerTTLArgs{
			Kind:     get("kind"),
			Database: get("database"),
		},
		Topic:        components.ConsumerTopicArgs{AllowedPersistenceRegions: list("allowedPersistenceRegions")},
		Subscription: components.ConsumerSubscriptionArgs{Filter: get("subscriptionFilter")},
		Alerts:       components.ConsumerAlertsArgs{Disabled: boolean("disableAlerts")},
		SkipServices: boolean("skipServices"),
	}
	if chans := list("notificationChannels"); len(chans) > 0 {
		args.Alerts.NotificationChannels = pulumi.ToStringArray(chans)
	}
	if v := get("existingTopic"); v != "" {
		args.Topic.Existing = pulumi.String(v)
	}
	if v := get("kmsKeyName"); v != "" {
		args.KMSKeyName = pulumi.String(v)
	}
	if v := get("runtimeServiceAccount"); v != "" {
		args.Service.ServiceAccountEmail = pulumi.String(v)
	}
	if net, sub := get("vpcNetwork"), get("vpcSubnetwork"); net != "" || sub != "" {
		args.Service.VPC = &components.VPCArgs{Network: pulumi.String(net), Subnetwork: pulumi.String(sub), Egress: get("vpcEgress")}
		if net == "" || sub == "" {
			errs = append(errs, errors.New("config oncegate:vpcNetwork and oncegate:vpcSubnetwork go together (Direct VPC egress needs both)"))
		}
	}
	switch b := or("backend", "datastore"); b {
	case "datastore":
	case "redis":
		r := &components.RedisBackendArgs{MemorySizeGB: integer("redisMemorySizeGb"), Tier: get("redisTier")}
		if v := get("redisAddrSecret"); v != "" {
			r.Addr = &components.SecretRef{Secret: pulumi.String(v)}
		}
		args.Service.Backend.Redis = r
	case "sql":
		inst, dsn := get("sqlInstance"), get("sqlDsnSecret")
		if inst == "" || dsn == "" {
			errs = append(errs, errors.New("config oncegate:sqlInstance (the Cloud SQL connection name <project>:<region>:<instance>) and oncegate:sqlDsnSecret (a Secret Manager secret holding the DSN) are required with backend sql"))
		}
		args.Service.Backend.SQL = &components.SQLBackendArgs{Instance: pulumi.String(inst), DSN: components.SecretRef{Secret: pulumi.String(dsn)}}
	default:
		bad("backend", b, "datastore, redis or sql")
	}
	if boolean("createDatabase") {
		loc := get("databaseLocation")
		if loc == "" {
			errs = append(errs, errors.New("config oncegate:databaseLocation is not set; createDatabase needs it, e.g. nam5 or europe-west1"))
		}
		args.TTLPolicy.CreateDatabase = &components.DatabaseArgs{
			LocationID:      pulumi.String(loc),
			ConcurrencyMode: get("concurrencyMode"),
		}
	}
	name := or("name", "oncegate")
	if len(errs) > 0 {
		return settings{}, errors.Join(errs...)
	}
	return settings{name: name, args: args}, nil
}
