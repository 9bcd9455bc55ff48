package components

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/oncegate/oncegate/sizing"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/cloudrunv2"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/projects"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/redis"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/secretmanager"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/serviceaccount"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// ServiceArgs configure Service. Project, Region and Image are required.
type ServiceArgs struct {
	// Project is the project ID; it is also GOOGLE_CLOUD_PROJECT. Required.
	Project pulumi.StringInput
	// Region is the Cloud Run location, e.g. "europe-west1". Required.
	Region pulumi.StringInput
	// Image is the container image running the gateway. Required.
	Image pulumi.StringInput
	// Plan sets the request timeout and every variable sizing.Plan.Env
	// writes. It is validated with sizing.Plan.Validate; an unsafe plan is an
	// error.
	Plan sizing.Plan
	// Namespace is ONCEGATE_NAMESPACE. Empty means the component's name.
	Namespace string
	// Backend is where the gateway keeps its records. The zero value is
	// Firestore in Datastore mode.
	Backend BackendArgs
	// OIDC is the push identity the runtime admits (ONCEGATE_OIDC_AUDIENCE,
	// ONCEGATE_OIDC_SERVICE_ACCOUNT). A set Audience is also a custom
	// audience of the service, so Cloud Run's IAM check accepts tokens for
	// it. Source: Cloud Run "Custom audiences",
	// https://cloud.google.com/run/docs/configuring/custom-audiences
	OIDC OIDCArgs

	// Name is the Cloud Run service name. Nil means one derived from the
	// component's name.
	Name pulumi.StringPtrInput
	// ServiceAccountID is the runtime service account's ID. Empty means one
	// derived from the component's name ("<name>-run").
	ServiceAccountID string
	// ServiceAccountEmail runs the service as an existing account instead of
	// creating one; the backend's roles are still granted to it. It may not
	// be combined with ServiceAccountID.
	ServiceAccountEmail pulumi.StringInput
	// Concurrency is the most requests an instance serves at once, 1–1000.
	// Zero means Cloud Run's default, DefaultConcurrency.
	Concurrency int
	// MinInstances and MaxInstances bound the instance count; zero leaves a
	// bound unset.
	MinInstances, MaxInstances int
	// CPU and Memory are the container's limits, e.g. "1" or "2" and
	// "512Mi" or "1Gi". Empty leaves Cloud Run's defaults (1 CPU, 512 MiB).
	// Source: https://cloud.google.com/run/docs/configuring/services/cpu and
	// .../memory-limits
	CPU, Memory string
	// HealthPath, when set, adds an HTTP startup and liveness probe on it
	// (gateenv's Config.Serve answers GET /healthz). Empty keeps Cloud Run's
	// default TCP startup probe. Source: Cloud Run "Configure container
	// health checks", https://cloud.google.com/run/docs/configuring/healthchecks
	HealthPath string
	// Env holds extra variables, e.g. SUPPLIER_URL. It may not set a
	// variable of the configuration contract, nor ONCEGATE_DISABLED or
	// ONCEGATE_OIDC_DISABLED (local runs only): either is an error naming it.
	Env map[string]pulumi.StringInput
	// SecretEnv holds extra variables read from Secret Manager, e.g. the
	// supplier's credentials; the runtime account is granted
	// roles/secretmanager.secretAccessor on each secret.
	SecretEnv map[string]SecretRef
	// Ingress is INGRESS_TRAFFIC_INTERNAL_ONLY (the default when empty),
	// INGRESS_TRAFFIC_ALL or INGRESS_TRAFFIC_INTERNAL_LOAD_BALANCER.
	// Internal-only admits Pub/Sub push from the same project or VPC Service
	// Controls perimeter on the default run.app URL, and nothing from the
	// internet; IAM (run.invoker) still admits only the push account. Source:
	// Cloud Run "Restrict network ingress",
	// https://cloud.google.com/run/docs/securing/ingress
	Ingress string
	// VPC routes the service's private traffic into a VPC network by Direct
	// VPC egress. Required for Redis. Source: Cloud Run "Direct VPC egress",
	// https://cloud.google.com/run/docs/configuring/vpc-direct-vpc
	VPC *VPCArgs
	// KMSKeyName encrypts the container image with this Cloud KMS key (CMEK,
	// the revision's encryptionKey). The Cloud Run service agent needs
	// roles/cloudkms.cryptoKeyEncrypterDecrypter on it (docs/deploy.md).
	// Source: Cloud Run "Use customer managed encryption keys",
	// https://cloud.google.com/run/docs/securing/using-cmek
	KMSKeyName pulumi.StringInput
	// DeletionProtection keeps `pulumi destroy` from deleting the service.
	DeletionProtection bool
	// Labels are applied to the service and the resources it creates.
	Labels pulumi.StringMapInput
	// DependsOn makes every child wait for these resources, e.g. the
	// ProjectServices that enable the APIs it uses.
	DependsOn []pulumi.Resource
}

// BackendArgs choose the gateway's store; at most one of Redis and SQL is set.
type BackendArgs struct {
	// Datastore configures Firestore in Datastore mode, the backend when
	// Redis and SQL are nil. The runtime account gets roles/datastore.user.
	Datastore DatastoreBackendArgs
	// Redis uses Memorystore for Redis, reached over VPC.
	Redis *RedisBackendArgs
	// SQL uses Cloud SQL for PostgreSQL or MySQL, reached over the Cloud SQL
	// unix socket that Cloud Run mounts at /cloudsql/<connection name>.
	SQL *SQLBackendArgs
}

// DatastoreBackendArgs configure the Datastore backend.
type DatastoreBackendArgs struct {
	// Kind is ONCEGATE_DATASTORE_KIND. Empty means DefaultKind.
	Kind string
	// Database is the database ID. Empty means DefaultDatabase, which
	// ONCEGATE_DATASTORE_DATABASE carries as the empty string (the Datastore
	// API's name for the default database).
	Database string
}

// RedisBackendArgs configure the Redis backend.
type RedisBackendArgs struct {
	// Addr is a Secret Manager secret holding ONCEGATE_REDIS_ADDR of an
	// existing server, e.g. redis://:AUTH@10.0.0.3:6379. Nil creates a
	// Memorystore instance with AUTH on, maxmemory-policy noeviction (an
	// evicted record would let a done key run again) and its address and AUTH
	// string in a new secret. Source: Memorystore for Redis "Supported Redis
	// configurations", https://cloud.google.com/memorystore/docs/redis/supported-redis-configurations
	Addr *SecretRef
	// MemorySizeGB of a created instance. Zero means 1.
	MemorySizeGB int
	// Tier of a created instance: STANDARD_HA (the default when empty, a
	// replica survives a zone failure) or BASIC.
	Tier string
	// Version of a created instance: REDIS_7_0 or REDIS_7_2 (the default when
	// empty). The runtime's record format needs Redis 7.0 or later
	// (redisgate.MinServerVersion) and refuses an older server at start-up.
	// Source: Memorystore for Redis "Supported versions",
	// https://cloud.google.com/memorystore/docs/redis/supported-versions
	Version string
}

// SQLBackendArgs configure the SQL backend.
type SQLBackendArgs struct {
	// Instance is the Cloud SQL instance's connection name,
	// "<project>:<region>:<instance>". Required.
	Instance pulumi.StringInput
	// DSN is a Secret Manager secret holding ONCEGATE_SQL_DSN over the
	// socket, e.g. postgres://USER:PASSWORD@/DB?host=/cloudsql/<connection name>.
	// Required. Source: Cloud SQL "Connect from Cloud Run",
	// https://cloud.google.com/sql/docs/postgres/connect-run
	DSN SecretRef
}

// VPCArgs configure Direct VPC egress.
type VPCArgs struct {
	// Network is the VPC network, e.g. "projects/<p>/global/networks/default".
	// Required.
	Network pulumi.StringInput
	// Subnetwork is the subnet the instances get addresses from. Required.
	Subnetwork pulumi.StringInput
	// Egress is PRIVATE_RANGES_ONLY (the default when empty) or
	// ALL_TRAFFIC.
	Egress string
}

// OIDCArgs are the push identity the runtime checks.
type OIDCArgs struct {
	// Audience is the push subscription's OIDC audience.
	Audience pulumi.StringInput
	// ServiceAccountEmail is the push subscription's service account.
	ServiceAccountEmail pulumi.StringInput
}

// DefaultConcurrency is Cloud Run's default maximum concurrent requests per
// instance (80). Source: Cloud Run "Maximum concurrent requests per instance",
// https://cloud.google.com/run/docs/about-concurrency
const DefaultConcurrency = 80

// Ingress settings a Service accepts.
var ingressSettings = []string{"INGRESS_TRAFFIC_INTERNAL_ONLY", "INGRESS_TRAFFIC_ALL", "INGRESS_TRAFFIC_INTERNAL_LOAD_BALANCER"}

// Service runs the gateway on Cloud Run v2 under a runtime service account,
// with the request timeout of the plan and the configuration contract of
// docs/design.md in its environment: the backend's variables (credentials
// through Secret Manager references, never plain values), the push identity
// and every variable of the plan. It grants no invoker: PushSubscription
// grants run.invoker to its push account only.
type Service struct {
	pulumi.ResourceState

	// URL is the service's URL, the push endpoint.
	URL pulumi.StringOutput `pulumi:"url"`
	// ServiceName is the Cloud Run service's name.
	ServiceName pulumi.StringOutput `pulumi:"serviceName"`
	// Location is the service's region.
	Location pulumi.StringOutput `pulumi:"location"`
	// ServiceAccountEmail is the runtime service account's email.
	ServiceAccountEmail pulumi.StringOutput `pulumi:"serviceAccountEmail"`
	// Plan is the resolved plan as its ONCEGATE_* variables.
	Plan pulumi.StringMapOutput `pulumi:"plan"`

	// Run is the Cloud Run service resource.
	Run *cloudrunv2.Service `pulumi:"-"`
}

// serviceSpec is ServiceArgs checked, with defaults.
type serviceSpec struct {
	plan                      sizing.Plan
	namespace, kind, database string
	backend                   string
	saID, ingress, egress     string
	concurrency               int
}

var (
	cpuRE    = regexp.MustCompile(`^([1-9][0-9]*|[1-9][0-9]*m|0\.[0-9]+)$`)
	memoryRE = regexp.MustCompile(`^[1-9][0-9]*(Mi|Gi)$`)
	pathRE   = regexp.MustCompile(`^/[A-Za-z0-9._~/-]*$`)
)

// validate checks args without registering anything. It returns an error for
// a missing required argument, an unsafe plan (the sizing sentences), an Env
// or SecretEnv entry the contract owns or Cloud Run reserves, an invalid
// account ID, an unknown ingress or egress setting, malformed CPU, memory or
// health path, two backends at once, or Redis without VPC.
func (args *ServiceArgs) validate(name string) (serviceSpec, error) {
	if args == nil || args.Project == nil || args.Region == nil || args.Image == nil {
		return serviceSpec{}, fmt.Errorf("service %q: Project, Region and Image are required", name)
	}
	fail := func(format string, a ...any) (serviceSpec, error) {
		return serviceSpec{}, fmt.Errorf("service %q: %s", name, fmt.Sprintf(format, a...))
	}
	plan, err := resolvePlan(args.Plan)
	if err != nil {
		return serviceSpec{}, fmt.Errorf("service %q: %w", name, err)
	}
	s := serviceSpec{plan: plan, namespace: args.Namespace, kind: args.Backend.Datastore.Kind, database: args.Backend.Datastore.Database,
		saID: args.ServiceAccountID, ingress: args.Ingress, concurrency: args.Concurrency, backend: "datastore"}
	if s.namespace == "" {
		s.namespace = name
	}
	if s.kind == "" {
		s.kind = DefaultKind
	}
	if s.database == "" {
		s.database = DefaultDatabase
	}
	if err := validEnv("Env", args.Env); err != nil {
		return fail("%v", err)
	}
	if err := validEnv("SecretEnv", args.SecretEnv); err != nil {
		return fail("%v", err)
	}
	for _, k := range sortedKeys(args.SecretEnv) {
		if _, dup := args.Env[k]; dup {
			return fail("%s is in both Env and SecretEnv; keep one", k)
		}
		if err := args.SecretEnv[k].validate("SecretEnv[" + k + "]"); err != nil {
			return fail("%v", err)
		}
	}
	switch {
	case args.ServiceAccountEmail != nil && s.saID != "":
		return fail("ServiceAccountID and ServiceAccountEmail exclude each other; set one")
	case s.saID == "":
		s.saID = accountID(name, "run")
	default:
		if err := validAccountID("service "+name+": ServiceAccountID", s.saID); err != nil {
			return serviceSpec{}, err
		}
	}
	if s.ingress == "" {
		s.ingress = ingressSettings[0]
	} else if !slices.Contains(ingressSettings, s.ingress) {
		return fail("Ingress %q is not one of %v", s.ingress, ingressSettings)
	}
	if s.concurrency == 0 {
		s.concurrency = DefaultConcurrency
	} else if s.concurrency < 1 || s.concurrency > 1000 {
		return fail("Concurrency %d must be 1–1000, or 0 for Cloud Run's default of %d", s.concurrency, DefaultConcurrency)
	}
	if args.MinInstances < 0 || args.MaxInstances < 0 || (args.MaxInstances > 0 && args.MinInstances > args.MaxInstances) {
		return fail("MinInstances %d and MaxInstances %d must be 0 or more, with min ≤ max", args.MinInstances, args.MaxInstances)
	}
	if args.CPU != "" && !cpuRE.MatchString(args.CPU) {
		return fail("CPU %q must be a CPU count such as 1, 2 or 1000m", args.CPU)
	}
	if args.Memory != "" && !memoryRE.MatchString(args.Memory) {
		return fail("Memory %q must be a size such as 512Mi or 2Gi", args.Memory)
	}
	if args.HealthPath != "" && !pathRE.MatchString(args.HealthPath) {
		return fail("HealthPath %q must be an absolute URL path such as /healthz", args.HealthPath)
	}
	if v := args.VPC; v != nil {
		if v.Network == nil || v.Subnetwork == nil {
			return fail("VPC.Network and VPC.Subnetwork are both required for Direct VPC egress")
		}
		switch s.egress = v.Egress; s.egress {
		case "":
			s.egress = "PRIVATE_RANGES_ONLY"
		case "PRIVATE_RANGES_ONLY", "ALL_TRAFFIC":
		default:
			return fail("VPC.Egress %q is not one of PRIVATE_RANGES_ONLY, ALL_TRAFFIC", s.egress)
		}
	}
	b := args.Backend
	switch {
	case b.Redis != nil && b.SQL != nil:
		return fail("Backend.Redis and Backend.SQL exclude each other; set one (or neither for Datastore)")
	case b.Redis != nil:
		s.backend = "redis"
		if args.VPC == nil {
			return fail("Backend.Redis needs VPC: Memorystore is reached only from its VPC network")
		}
		if b.Redis.Addr != nil {
			if err := b.Redis.Addr.validate("Backend.Redis.Addr"); err != nil {
				return fail("%v", err)
			}
		}
		if b.Redis.MemorySizeGB < 0 || b.Redis.MemorySizeGB > 300 {
			return fail("Backend.Redis.MemorySizeGB %d must be 1–300, or 0 for 1", b.Redis.MemorySizeGB)
		}
		switch b.Redis.Tier {
		case "", "STANDARD_HA", "BASIC":
		default:
			return fail("Backend.Redis.Tier %q is not one of STANDARD_HA, BASIC", b.Redis.Tier)
		}
		switch b.Redis.Version {
		case "", "REDIS_7_0", "REDIS_7_2":
		default:
			return fail("Backend.Redis.Version %q is not one of REDIS_7_0, REDIS_7_2 (the runtime needs Redis 7.0 or later)", b.Redis.Version)
		}
	case b.SQL != nil:
		s.backend = "sql"
		if b.SQL.Instance == nil {
			return fail("Backend.SQL.Instance is required: the Cloud SQL connection name <project>:<region>:<instance>")
		}
		if err := b.SQL.DSN.validate("Backend.SQL.DSN"); err != nil {
			return fail("%v", err)
		}
	}
	if (args.OIDC.Audience == nil) != (args.OIDC.ServiceAccountEmail == nil) {
		return fail("OIDC.Audience and OIDC.ServiceAccountEmail go together (the runtime checks both)")
	}
	return s, nil
}

// NewService registers a Service component named name. It returns an error,
// before registering anything, for any input validate refuses.
func NewService(ctx *pulumi.Context, name string, args *ServiceArgs, opts ...pulumi.ResourceOption) (*Service, error) {
	spec, err := args.validate(name)
	if err != nil {
		return nil, err
	}
	s := &Service{}
	if err := ctx.RegisterComponentResource(typeService, name, s, opts...); err != nil {
		return nil, err
	}
	parent := pulumi.Composite(pulumi.Parent(s), pulumi.DependsOn(args.DependsOn))
	wrap := func(what string, err error) error { return fmt.Errorf("service %q: %s: %w", name, what, err) }

	email := args.ServiceAccountEmail
	if email == nil {
		sa, err := serviceaccount.NewAccount(ctx, name+"-run-sa", &serviceaccount.AccountArgs{
			Project:     args.Project,
			AccountId:   pulumi.String(spec.saID),
			DisplayName: pulumi.String("oncegate runtime (" + name + ")"),
		}, parent)
		if err != nil {
			return nil, wrap("runtime account", err)
		}
		email = sa.Email
	}
	member := pulumi.Sprintf("serviceAccount:%s", email)
	var grants []pulumi.Resource
	projectRole := func(suffix, role string) error {
		g, err := projects.NewIAMMember(ctx, name+"-"+suffix, &projects.IAMMemberArgs{
			Project: args.Project, Role: pulumi.String(role), Member: member,
		}, parent)
		if err != nil {
			return wrap(role, err)
		}
		grants = append(grants, g)
		return nil
	}

	var envs envList
	envs.add(EnvBackend, pulumi.String(spec.backend))
	envs.add(EnvNamespace, pulumi.String(spec.namespace))
	envs.add(EnvProject, args.Project)
	secrets := map[string]SecretRef{}
	tmpl := &cloudrunv2.ServiceTemplateArgs{
		ServiceAccount:                email,
		Timeout:                       pulumi.String(googleDuration(spec.plan.RequestTimeout)),
		MaxInstanceRequestConcurrency: pulumi.Int(spec.concurrency),
	}
	container := &cloudrunv2.ServiceTemplateContainerArgs{Image: args.Image}

	switch b := args.Backend; spec.backend {
	case "datastore":
		envs.add(EnvDatastoreKind, pulumi.String(spec.kind))
		envs.add(EnvDatastoreDatabase, pulumi.String(clientDatabase(spec.database)))
		if err := projectRole("datastore-user", roleDatastore); err != nil {
			return nil, err
		}
	case "redis":
		addr := b.Redis.Addr
		if addr == nil {
			ref, err := newMemorystore(ctx, name, args, b.Redis, parent)
			if err != nil {
				return nil, wrap("memorystore", err)
			}
			addr = &ref
		}
		envs.secret(EnvRedisAddr, *addr)
		secrets["redis"] = *addr
	case "sql":
		envs.secret(EnvSQLDSN, b.SQL.DSN)
		// One connection per request in flight is the most an instance
		// can use; more would only crowd the database's connection limit.
		envs.add(EnvSQLMaxConns, pulumi.String(strconv.Itoa(spec.concurrency)))
		secrets["sql-dsn"] = b.SQL.DSN
		if err := projectRole("sql-client", roleSQLClient); err != nil {
			return nil, err
		}
		tmpl.Volumes = cloudrunv2.ServiceTemplateVolumeArray{&cloudrunv2.ServiceTemplateVolumeArgs{
			Name:             pulumi.String("cloudsql"),
			CloudSqlInstance: &cloudrunv2.ServiceTemplateVolumeCloudSqlInstanceArgs{Instances: pulumi.StringArray{b.SQL.Instance}},
		}}
		container.VolumeMounts = cloudrunv2.ServiceTemplateContainerVolumeMountArray{&cloudrunv2.ServiceTemplateContainerVolumeMountArgs{
			Name: pulumi.String("cloudsql"), MountPath: pulumi.String("/cloudsql"),
		}}
	}
	if args.OIDC.Audience != nil {
		envs.add(EnvOIDCAudience, args.OIDC.Audience)
		envs.add(EnvOIDCServiceAccount, args.OIDC.ServiceAccountEmail)
	}
	planEnv := spec.plan.Env()
	for _, k := range planEnvNames(spec.plan) {
		envs.add(k, pulumi.String(planEnv[k]))
	}
	for _, k := range sortedKeys(args.Env) {
		envs.add(k, args.Env[k])
	}
	for _, k := range sortedKeys(args.SecretEnv) {
		envs.secret(k, args.SecretEnv[k])
		secrets["env-"+k] = args.SecretEnv[k]
	}
	// The runtime account may read each secret it gets, and nothing else.
	for _, k := range sortedKeys(secrets) {
		g, err := secretmanager.NewSecretIamMember(ctx, name+"-secret-"+accountSafe(k), &secretmanager.SecretIamMemberArgs{
			Project:  args.Project,
			SecretId: secrets[k].Secret,
			Role:     pulumi.String(roleSecret),
			Member:   member,
		}, parent)
		if err != nil {
			return nil, wrap("secret access", err)
		}
		grants = append(grants, g)
	}
	container.Envs = cloudrunv2.ServiceTemplateContainerEnvArray(envs)

	if args.CPU != "" || args.Memory != "" {
		limits := pulumi.StringMap{}
		if args.CPU != "" {
			limits["cpu"] = pulumi.String(args.CPU)
		}
		if args.Memory != "" {
			limits["memory"] = pulumi.String(args.Memory)
		}
		container.Resources = &cloudrunv2.ServiceTemplateContainerResourcesArgs{Limits: limits}
	}
	if p := args.HealthPath; p != "" {
		container.StartupProbe = &cloudrunv2.ServiceTemplateContainerStartupProbeArgs{
			HttpGet:          &cloudrunv2.ServiceTemplateContainerStartupProbeHttpGetArgs{Path: pulumi.String(p)},
			PeriodSeconds:    pulumi.Int(2),
			FailureThreshold: pulumi.Int(30),
			TimeoutSeconds:   pulumi.Int(1),
		}
		container.LivenessProbe = &cloudrunv2.ServiceTemplateContainerLivenessProbeArgs{
			HttpGet:          &cloudrunv2.ServiceTemplateContainerLivenessProbeHttpGetArgs{Path: pulumi.String(p)},
			PeriodSeconds:    pulumi.Int(10),
			FailureThreshold: pulumi.Int(3),
			TimeoutSeconds:   pulumi.Int(1),
		}
	}
	tmpl.Containers = cloudrunv2.ServiceTemplateContainerArray{container}
	if args.MinInstances > 0 || args.MaxInstances > 0 {
		sc := &cloudrunv2.ServiceTemplateScalingArgs{}
		if args.MinInstances > 0 {
			sc.MinInstanceCount = pulumi.Int(args.MinInstances)
		}
		if args.MaxInstances > 0 {
			sc.MaxInstanceCount = pulumi.Int(args.MaxInstances)
		}
		tmpl.Scaling = sc
	}
	if v := args.VPC; v != nil {
		tmpl.VpcAccess = &cloudrunv2.ServiceTemplateVpcAccessArgs{
			Egress: pulumi.String(spec.egress),
			NetworkInterfaces: cloudrunv2.ServiceTemplateVpcAccessNetworkInterfaceArray{
				&cloudrunv2.ServiceTemplateVpcAccessNetworkInterfaceArgs{Network: v.Network, Subnetwork: v.Subnetwork},
			},
		}
	}
	if args.KMSKeyName != nil {
		tmpl.EncryptionKey = args.KMSKeyName
	}
	runArgs := &cloudrunv2.ServiceArgs{
		Project:            args.Project,
		Location:           args.Region,
		Name:               args.Name,
		Ingress:            pulumi.String(spec.ingress),
		InvokerIamDisabled: pulumi.Bool(false),
		DeletionProtection: pulumi.Bool(args.DeletionProtection),
		Labels:             args.Labels,
		Template:           tmpl,
	}
	if args.OIDC.Audience != nil {
		runArgs.CustomAudiences = pulumi.StringArray{args.OIDC.Audience}
	}
	svc, err := cloudrunv2.NewService(ctx, name+"-service", runArgs, parent, pulumi.DependsOn(grants))
	if err != nil {
		return nil, wrap("cloud run", err)
	}

	s.Run = svc
	s.URL = svc.Uri
	s.ServiceName = svc.Name
	s.Location = svc.Location
	s.ServiceAccountEmail = tie(s, email)
	s.Plan = tieMap(s, planEnv)
	if err := ctx.RegisterResourceOutputs(s, pulumi.Map{
		"url": s.URL, "serviceName": s.ServiceName, "location": s.Location,
		"serviceAccountEmail": s.ServiceAccountEmail, "plan": s.Plan,
	}); err != nil {
		return nil, err
	}
	return s, nil
}

// newMemorystore creates a Memorystore for Redis instance on the service's
// VPC network and a secret holding its redis:// URL with the AUTH string.
func newMemorystore(ctx *pulumi.Context, name string, args *ServiceArgs, r *RedisBackendArgs, opts pulumi.ResourceOption) (SecretRef, error) {
	size, tier, version := r.MemorySizeGB, r.Tier, r.Version
	if size == 0 {
		size = 1
	}
	if tier == "" {
		tier = "STANDARD_HA"
	}
	if version == "" {
		version = "REDIS_7_2"
	}
	inst, err := redis.NewInstance(ctx, name+"-redis", &redis.InstanceArgs{
		Project:           args.Project,
		Region:            args.Region,
		Tier:              pulumi.String(tier),
		MemorySizeGb:      pulumi.Int(size),
		RedisVersion:      pulumi.String(version),
		AuthorizedNetwork: args.VPC.Network,
		ConnectMode:       pulumi.String("DIRECT_PEERING"),
		AuthEnabled:       pulumi.Bool(true),
		RedisConfigs:      pulumi.StringMap{"maxmemory-policy": pulumi.String("noeviction")},
		Labels:            args.Labels,
	}, opts)
	if err != nil {
		return SecretRef{}, err
	}
	sec, err := secretmanager.NewSecret(ctx, name+"-redis-addr", &secretmanager.SecretArgs{
		Project:     args.Project,
		Replication: &secretmanager.SecretReplicationArgs{Auto: &secretmanager.SecretReplicationAutoArgs{}},
		Labels:      args.Labels,
	}, opts)
	if err != nil {
		return SecretRef{}, err
	}
	ver, err := secretmanager.NewSecretVersion(ctx, name+"-redis-addr-v", &secretmanager.SecretVersionArgs{
		Secret: sec.ID(),
		// AuthString is a secret output, so the URL stays one.
		SecretData: pulumi.Sprintf("redis://:%s@%s:%d", inst.AuthString, inst.Host, inst.Port),
	}, opts)
	if err != nil {
		return SecretRef{}, err
	}
	// The service reads the version that holds this instance's address.
	return SecretRef{Secret: pulumi.All(sec.SecretId, ver.Version).ApplyT(func(v []any) string { return v[0].(string) }).(pulumi.StringOutput)}, nil
}

// accountSafe makes k usable in a resource name.
func accountSafe(k string) string {
	b := []byte(k)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			if c >= 'A' && c <= 'Z' {
				b[i] = c + 'a' - 'A'
			} else {
				b[i] = '-'
			}
		}
	}
	return string(b)
}
