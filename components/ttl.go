package components

import (
	"fmt"

	"github.com/oncegate/oncegate/internal/ttladmin"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/firestore"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// TTLPolicyArgs configure TTLPolicy.
type TTLPolicyArgs struct {
	// Project is the project ID. Required.
	Project pulumi.StringInput
	// Kind is the Datastore kind holding the gateway's records. Empty means
	// DefaultKind.
	Kind string
	// Database is the Firestore database ID. Empty means DefaultDatabase.
	Database string
	// CreateDatabase, when set, creates Database in Datastore mode; nil means
	// it exists already.
	CreateDatabase *DatabaseArgs
	// DependsOn makes every child wait for these resources, e.g. the
	// ProjectServices that enable the APIs it uses.
	DependsOn []pulumi.Resource
}

// DatabaseArgs configure a Firestore database created in Datastore mode.
type DatabaseArgs struct {
	// LocationID is the database location, e.g. "nam5" or "us-central1".
	// Required.
	LocationID pulumi.StringInput
	// ConcurrencyMode is "PESSIMISTIC" (the default when empty) or
	// "OPTIMISTIC". "OPTIMISTIC_WITH_ENTITY_GROUPS" is refused: TTL policies do
	// not support it. Source: Firestore "Manage data retention with TTL
	// policies", https://cloud.google.com/datastore/docs/ttl
	ConcurrencyMode string
	// DeleteProtection turns on the database's delete protection.
	DeleteProtection bool
	// DeletionPolicy is what `pulumi destroy` does: "ABANDON" (the provider's
	// default when empty) leaves the database, "DELETE" deletes it.
	DeletionPolicy string
}

// TTLPolicy owns the Firestore TTL policy on TTLField of the gateway's kind:
// it creates the database in Datastore mode when asked, and gives the two
// commands that turn the policy on and confirm it, which a deployment must
// run (docs/deploy.md, "Turn on the TTL policy").
//
// The policy is not a Pulumi resource, on purpose. pulumi-gcp v8.41.1 bridges
// hashicorp/terraform-provider-google v6.49.2, whose google_firestore_field
// create is a PATCH of the whole field without an update mask
// (google/services/firestore/resource_firestore_field.go,
// resourceFirestoreFieldCreate; the same in v7) and whose delete is a PATCH
// with updateMask=indexConfig,ttlConfig. An unmasked PATCH rewrites the
// field's index configuration too, and a Datastore-mode database refuses any
// change of single-field indexing: "Single-field indexing modes cannot be
// updated in Datastore mode databases", hashicorp/terraform-provider-google
// issue #15781, reported for a Field with only ttl_config {}. So every
// firestore.Field fails on such a database, and the Service would never be
// created behind it. `oncegate ttl enable` (internal/ttladmin) sends the one
// request the database accepts: UpdateField with update_mask ttlConfig and a
// body of an empty ttlConfig, as `gcloud firestore fields ttls update` does.
// Sources: Firestore Admin API fields.patch,
// https://cloud.google.com/firestore/docs/reference/rest/v1/projects.databases.collectionGroups.fields/patch;
// Datastore TTL policies, https://cloud.google.com/datastore/docs/ttl.
//
// Indexing is left as the runtime writes it: datastoregate keeps expires_at
// indexed, since Purge queries it, and state, which ListUnresolved queries. A
// record is deleted typically within 24 hours after expires_at; correctness
// never depends on it, since expiry is judged at read time.
type TTLPolicy struct {
	pulumi.ResourceState

	// Database is the database ID the policy applies to.
	Database pulumi.StringOutput `pulumi:"database"`
	// Kind is the kind the policy applies to.
	Kind pulumi.StringOutput `pulumi:"kind"`
	// Field is the TTL property, TTLField.
	Field pulumi.StringOutput `pulumi:"field"`
	// EnableCommand turns the policy on: `oncegate ttl enable --project …
	// --database … --kind …`. Run it once after the first `pulumi up`.
	EnableCommand pulumi.StringOutput `pulumi:"enableCommand"`
	// CheckCommand exits zero once the policy is ACTIVE.
	CheckCommand pulumi.StringOutput `pulumi:"checkCommand"`

	// Resources are the children (the created database, if any), for
	// pulumi.DependsOn: a dependency on the component itself reaches only the
	// children already registered.
	Resources []pulumi.Resource `pulumi:"-"`
}

// ttlSpec is TTLPolicyArgs checked, with defaults.
type ttlSpec struct {
	kind, database, mode string
}

// validate checks args without registering anything: a missing Project or
// LocationID, a concurrency mode TTL does not support, a deletion policy
// other than ABANDON or DELETE, and a kind or database ID the Admin API
// cannot address are errors.
func (args *TTLPolicyArgs) validate(name string) (ttlSpec, error) {
	if args == nil || args.Project == nil {
		return ttlSpec{}, fmt.Errorf("ttl policy %q: Project is required", name)
	}
	s := ttlSpec{kind: args.Kind, database: args.Database}
	if s.kind == "" {
		s.kind = DefaultKind
	}
	if s.database == "" {
		s.database = DefaultDatabase
	}
	// The project is checked by `oncegate ttl`; a stand-in checks the rest.
	if err := (ttladmin.Policy{Project: "oncegate-check", Database: s.database, Kind: s.kind}).Validate(); err != nil {
		return s, fmt.Errorf("ttl policy %q: %w", name, err)
	}
	if d := args.CreateDatabase; d != nil {
		switch s.mode = d.ConcurrencyMode; s.mode {
		case "":
			s.mode = "PESSIMISTIC"
		case "PESSIMISTIC", "OPTIMISTIC":
		case "OPTIMISTIC_WITH_ENTITY_GROUPS":
			return s, fmt.Errorf("ttl policy %q: CreateDatabase.ConcurrencyMode OPTIMISTIC_WITH_ENTITY_GROUPS does not support TTL policies; use PESSIMISTIC or OPTIMISTIC", name)
		default:
			return s, fmt.Errorf("ttl policy %q: CreateDatabase.ConcurrencyMode %q is not one of PESSIMISTIC, OPTIMISTIC", name, s.mode)
		}
		if d.LocationID == nil {
			return s, fmt.Errorf("ttl policy %q: CreateDatabase.LocationID is required, e.g. nam5 or us-central1", name)
		}
		switch d.DeletionPolicy {
		case "", "ABANDON", "DELETE":
		default:
			return s, fmt.Errorf("ttl policy %q: CreateDatabase.DeletionPolicy %q is not one of ABANDON, DELETE", name, d.DeletionPolicy)
		}
	}
	return s, nil
}

// NewTTLPolicy registers a TTLPolicy component named name. It returns an
// error, before registering anything, for any input validate refuses.
func NewTTLPolicy(ctx *pulumi.Context, name string, args *TTLPolicyArgs, opts ...pulumi.ResourceOption) (*TTLPolicy, error) {
	spec, err := args.validate(name)
	if err != nil {
		return nil, err
	}
	c := &TTLPolicy{}
	if err := ctx.RegisterComponentResource(typeTTLPolicy, name, c, opts...); err != nil {
		return nil, err
	}
	database := tie(c, pulumi.String(spec.database))
	if d := args.CreateDatabase; d != nil {
		dba := &firestore.DatabaseArgs{
			Project:         args.Project,
			Name:            pulumi.String(spec.database),
			LocationId:      d.LocationID,
			Type:            pulumi.String("DATASTORE_MODE"),
			ConcurrencyMode: pulumi.String(spec.mode),
		}
		if d.DeleteProtection {
			dba.DeleteProtectionState = pulumi.String("DELETE_PROTECTION_ENABLED")
		}
		if d.DeletionPolicy != "" {
			dba.DeletionPolicy = pulumi.String(d.DeletionPolicy)
		}
		db, err := firestore.NewDatabase(ctx, name+"-db", dba, pulumi.Parent(c), pulumi.DependsOn(args.DependsOn))
		if err != nil {
			return nil, fmt.Errorf("ttl policy %q: database: %w", name, err)
		}
		database = db.Name
		c.Resources = append(c.Resources, db)
	}
	c.Database = database
	c.Kind = tie(c, pulumi.String(spec.kind))
	c.Field = tie(c, pulumi.String(TTLField))
	flags := pulumi.Sprintf("--project %s --database '%s' --kind %s", args.Project, database, spec.kind)
	c.EnableCommand = pulumi.Sprintf("oncegate ttl enable %s", flags)
	c.CheckCommand = pulumi.Sprintf("oncegate ttl check %s", flags)
	if err := ctx.RegisterResourceOutputs(c, pulumi.Map{
		"database": c.Database, "kind": c.Kind, "field": c.Field,
		"enableCommand": c.EnableCommand, "checkCommand": c.CheckCommand,
	}); err != nil {
		return nil, err
	}
	return c, nil
}
