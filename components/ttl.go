package components

import (
	"errors"
	"fmt"

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
	// KeepIndex leaves expires_at's single-field index on. By default it is
	// turned off; keep it only to run datastoregate's Purge, which queries
	// expires_at, against a database that also has the TTL policy.
	KeepIndex bool
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

// TTLPolicy enables Firestore's TTL policy on TTLField of the gateway's kind,
// with single-field indexing of that property turned off: the gateway never
// queries it, and an indexed field of sequential values such as timestamps
// caps a collection at 500 writes per second (Firestore "Best practices",
// "Index exemptions", https://cloud.google.com/firestore/docs/best-practices).
// The TTL policy itself: https://cloud.google.com/datastore/docs/ttl. Records are
// deleted typically within 24 hours after expires_at; correctness never
// depends on it, since expiry is judged at read time.
type TTLPolicy struct {
	pulumi.ResourceState

	// Database is the database ID the policy applies to.
	Database pulumi.StringOutput `pulumi:"database"`
	// Kind is the kind the policy applies to.
	Kind pulumi.StringOutput `pulumi:"kind"`
	// Field is the TTL property, TTLField.
	Field pulumi.StringOutput `pulumi:"field"`
}

// NewTTLPolicy registers a TTLPolicy component named name. It returns an
// error for a missing Project or LocationID and for a concurrency mode TTL
// does not support.
func NewTTLPolicy(ctx *pulumi.Context, name string, args *TTLPolicyArgs, opts ...pulumi.ResourceOption) (*TTLPolicy, error) {
	if args == nil || args.Project == nil {
		return nil, errors.New("ttl policy: Project is required")
	}
	kind, dbID := args.Kind, args.Database
	if kind == "" {
		kind = DefaultKind
	}
	if dbID == "" {
		dbID = DefaultDatabase
	}
	mode := ""
	if d := args.CreateDatabase; d != nil {
		switch mode = d.ConcurrencyMode; mode {
		case "":
			mode = "PESSIMISTIC"
		case "PESSIMISTIC", "OPTIMISTIC":
		case "OPTIMISTIC_WITH_ENTITY_GROUPS":
			return nil, fmt.Errorf("ttl policy %q: CreateDatabase.ConcurrencyMode OPTIMISTIC_WITH_ENTITY_GROUPS does not support TTL policies; use PESSIMISTIC or OPTIMISTIC", name)
		default:
			return nil, fmt.Errorf("ttl policy %q: CreateDatabase.ConcurrencyMode %q is not one of PESSIMISTIC, OPTIMISTIC", name, mode)
		}
		if d.LocationID == nil {
			return nil, fmt.Errorf("ttl policy %q: CreateDatabase.LocationID is required, e.g. nam5 or us-central1", name)
		}
	}

	c := &TTLPolicy{}
	if err := ctx.RegisterComponentResource(typeTTLPolicy, name, c, opts...); err != nil {
		return nil, err
	}
	database := pulumi.String(dbID).ToStringOutput()
	if d := args.CreateDatabase; d != nil {
		dba := &firestore.DatabaseArgs{
			Project:         args.Project,
			Name:            pulumi.String(dbID),
			LocationId:      d.LocationID,
			Type:            pulumi.String("DATASTORE_MODE"),
			ConcurrencyMode: pulumi.String(mode),
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
	}
	fa := &firestore.FieldArgs{
		Project:    args.Project,
		Database:   database,
		Collection: pulumi.String(kind),
		Field:      pulumi.String(TTLField),
		// An empty TTL block enables the policy.
		TtlConfig: &firestore.FieldTtlConfigArgs{},
	}
	if !args.KeepIndex {
		// An empty index block turns off single-field indexing of the property.
		fa.IndexConfig = &firestore.FieldIndexConfigArgs{}
	}
	f, err := firestore.NewField(ctx, name+"-field", fa, pulumi.Parent(c), pulumi.DependsOn(args.DependsOn))
	if err != nil {
		return nil, fmt.Errorf("ttl policy %q: field: %w", name, err)
	}
	c.Database = f.Database.Elem()
	c.Kind = f.Collection
	c.Field = f.Field
	if err := ctx.RegisterResourceOutputs(c, pulumi.Map{"database": c.Database, "kind": c.Kind, "field": c.Field}); err != nil {
		return nil, err
	}
	return c, nil
}
