package components

import (
	"fmt"
	"slices"
	"strings"

	"github.com/oncegate/oncegate/sizing"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/cloudrunv2"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// Variables of the configuration contract (docs/design.md) besides the plan's.
const (
	EnvBackend           = "ONCEGATE_BACKEND"
	EnvNamespace         = "ONCEGATE_NAMESPACE"
	EnvDatastoreKind     = "ONCEGATE_DATASTORE_KIND"
	EnvDatastoreDatabase = "ONCEGATE_DATASTORE_DATABASE"
	EnvProject           = "GOOGLE_CLOUD_PROJECT"
)

// contract is the environment the gateway reads on Cloud Run, in a fixed
// order: the Datastore backend's variables, then the plan's (sizing.EnvNames).
type contract struct {
	project                   pulumi.StringInput
	namespace, kind, database string
	plan                      sizing.Plan // resolved
}

// owned reports whether the contract sets the variable name, so that extra
// variables cannot override it.
func owned(name string) bool {
	return slices.Contains([]string{EnvBackend, EnvNamespace, EnvDatastoreKind, EnvDatastoreDatabase, EnvProject}, name) ||
		slices.Contains(sizing.EnvNames(), name)
}

// envs returns the contract plus extra, as Cloud Run container variables;
// extra ones follow in name order. It returns an error when extra sets a
// variable the contract owns or an invalid name.
func (c contract) envs(extra map[string]pulumi.StringInput) (cloudrunv2.ServiceTemplateContainerEnvArray, error) {
	out := cloudrunv2.ServiceTemplateContainerEnvArray{
		env(EnvBackend, pulumi.String("datastore")),
		env(EnvNamespace, pulumi.String(c.namespace)),
		env(EnvDatastoreKind, pulumi.String(c.kind)),
		env(EnvDatastoreDatabase, pulumi.String(clientDatabase(c.database))),
		env(EnvProject, c.project),
	}
	planEnv := c.plan.Env()
	for _, k := range sizing.EnvNames() {
		out = append(out, env(k, pulumi.String(planEnv[k])))
	}
	names := make([]string, 0, len(extra))
	for k := range extra {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		switch {
		case owned(k):
			return nil, fmt.Errorf("env %s: the configuration contract sets it from the plan and the TTL policy; remove it", k)
		case k == "" || strings.ContainsAny(k, "= \t\n") || k == "PORT" || strings.HasPrefix(k, "X_GOOGLE_") || k == "K_SERVICE" || k == "K_REVISION" || k == "K_CONFIGURATION":
			return nil, fmt.Errorf("env %q: Cloud Run reserves or refuses this name; rename it", k)
		}
		out = append(out, env(k, extra[k]))
	}
	return out, nil
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

func env(name string, v pulumi.StringInput) cloudrunv2.ServiceTemplateContainerEnvInput {
	return &cloudrunv2.ServiceTemplateContainerEnvArgs{Name: pulumi.String(name), Value: v}
}
