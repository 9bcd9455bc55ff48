package components

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/oncegate/oncegate/sizing"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/cloudrunv2"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// Variables of the configuration contract (docs/design.md) besides the plan's,
// which sizing.Plan.Env writes.
const (
	EnvBackend           = "ONCEGATE_BACKEND"
	EnvNamespace         = "ONCEGATE_NAMESPACE"
	EnvDatastoreKind     = "ONCEGATE_DATASTORE_KIND"
	EnvDatastoreDatabase = "ONCEGATE_DATASTORE_DATABASE"
	EnvRedisAddr         = "ONCEGATE_REDIS_ADDR"
	EnvSQLDSN            = "ONCEGATE_SQL_DSN"
	// EnvSQLMaxConns caps the SQL pool of one instance; the Service sets it
	// to the instance's request concurrency.
	EnvSQLMaxConns = "ONCEGATE_SQL_MAX_CONNS"
	// EnvOIDCAudience and EnvOIDCServiceAccount are the push subscription's
	// OIDC audience and push service account email, which the runtime checks
	// on every push request's token.
	EnvOIDCAudience       = "ONCEGATE_OIDC_AUDIENCE"
	EnvOIDCServiceAccount = "ONCEGATE_OIDC_SERVICE_ACCOUNT"
	EnvProject            = "GOOGLE_CLOUD_PROJECT"
)

// contractNames are the variables the components set; Env and SecretEnv may
// not set them.
var contractNames = []string{
	EnvBackend, EnvNamespace, EnvDatastoreKind, EnvDatastoreDatabase, EnvRedisAddr, EnvSQLDSN,
	EnvSQLMaxConns, EnvOIDCAudience, EnvOIDCServiceAccount, EnvProject,
}

// owned reports whether the contract sets the variable name, so that extra
// variables cannot override it.
func owned(name string) bool {
	return slices.Contains(contractNames, name) || slices.Contains(planEnvNames(sizing.Plan{}), name)
}

// envDisabled turns the gateway off (every delivery runs unguarded), and
// envOIDCDisabled turns push token checks off (anyone who can reach the URL
// can push); a deployed service never sets either: they are for local runs.
const (
	envDisabled     = "ONCEGATE_DISABLED"
	envOIDCDisabled = "ONCEGATE_OIDC_DISABLED"
)

// planEnvNames lists every variable p.Env writes: sizing.EnvNames first, in
// their order, then any other (sorted), so the whole of the plan reaches the
// runtime even when sizing adds a variable.
func planEnvNames(p sizing.Plan) []string {
	names := sizing.EnvNames()
	var rest []string
	for k := range p.Env() {
		if !slices.Contains(names, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

// validEnv checks extra variable names: not the contract's, not reserved or
// refused by Cloud Run. Source: Cloud Run "Configure environment variables",
// https://cloud.google.com/run/docs/configuring/services/environment-variables
// ("Reserved names").
func validEnv[V any](field string, extra map[string]V) error {
	for k := range extra {
		switch {
		case owned(k):
			return fmt.Errorf("%s %s: the configuration contract sets it from the plan and the backend; remove it", field, k)
		case k == envDisabled:
			return fmt.Errorf("%s %s: it runs every delivery unguarded (handler unit tests only); remove it", field, k)
		case k == envOIDCDisabled:
			return fmt.Errorf("%s %s: it turns off the push token check, so anyone who can reach the service could push (local runs only); remove it", field, k)
		case k == "" || strings.ContainsAny(k, "= \t\n") || k == "PORT" || strings.HasPrefix(k, "X_GOOGLE_") || k == "K_SERVICE" || k == "K_REVISION" || k == "K_CONFIGURATION":
			return fmt.Errorf("%s %q: Cloud Run reserves or refuses this name; rename it", field, k)
		}
	}
	return nil
}

// SecretRef names a Secret Manager secret version whose value becomes an
// environment variable through Cloud Run's secret reference, so the value is
// never in the service's configuration. Source: Cloud Run "Configure secrets",
// https://cloud.google.com/run/docs/configuring/services/secrets
type SecretRef struct {
	// Secret is the secret's ID in the project, or
	// "projects/<p>/secrets/<s>". Required.
	Secret pulumi.StringInput
	// Version is the version to read. Empty means "latest".
	Version string
}

func (r SecretRef) version() string {
	if r.Version == "" {
		return "latest"
	}
	return r.Version
}

func (r SecretRef) validate(field string) error {
	if r.Secret == nil {
		return fmt.Errorf("%s.Secret is required (a Secret Manager secret ID)", field)
	}
	if v := r.Version; v != "" && v != "latest" {
		if n, err := strconv.Atoi(v); err != nil || n < 1 {
			return fmt.Errorf("%s.Version %q must be latest or a version number", field, v)
		}
	}
	return nil
}

// envList builds Cloud Run container variables.
type envList cloudrunv2.ServiceTemplateContainerEnvArray

func (l *envList) add(name string, v pulumi.StringInput) {
	*l = append(*l, &cloudrunv2.ServiceTemplateContainerEnvArgs{Name: pulumi.String(name), Value: v})
}

func (l *envList) secret(name string, r SecretRef) {
	*l = append(*l, &cloudrunv2.ServiceTemplateContainerEnvArgs{
		Name: pulumi.String(name),
		ValueSource: &cloudrunv2.ServiceTemplateContainerEnvValueSourceArgs{
			SecretKeyRef: &cloudrunv2.ServiceTemplateContainerEnvValueSourceSecretKeyRefArgs{
				Secret:  r.Secret,
				Version: pulumi.String(r.version()),
			},
		},
	})
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// clientDatabase is the database ID as the Datastore API takes it: empty for
// the default database, since the API refuses "(default)" as a database_id.
// Source: Datastore API v1 reference, e.g. CommitRequest.database_id,
// https://cloud.google.com/datastore/docs/reference/data/rest/v1/projects/commit
func clientDatabase(id string) string {
	if id == DefaultDatabase {
		return ""
	}
	return id
}
