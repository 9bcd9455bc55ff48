// Package ttladmin turns on and checks the Firestore TTL policy on the
// gateway's expires_at property, through the Firestore Admin API's field
// resource (projects.databases.collectionGroups.fields), for a database in
// Datastore mode.
//
// Why not Pulumi: the only Pulumi resource for it, gcp.firestore.Field, is the
// Terraform provider's google_firestore_field, whose create is a PATCH of the
// whole field with no update mask (hashicorp/terraform-provider-google
// v6.49.2, bridged by pulumi-gcp v8.41.1,
// google/services/firestore/resource_firestore_field.go,
// resourceFirestoreFieldCreate), and whose delete is a PATCH with
// updateMask=indexConfig,ttlConfig. Without a mask the whole field is written,
// index configuration included, and a Datastore-mode database refuses any
// change of single-field indexing ("Single-field indexing modes cannot be
// updated in Datastore mode databases", hashicorp/terraform-provider-google
// issue #15781, even for a bare ttl_config {}). Enable sends what that
// database accepts: updateMask=ttlConfig and a body of only {"ttlConfig":{}}.
// Sources: Firestore Admin API, "Method: projects.databases.collectionGroups.fields.patch",
// https://cloud.google.com/firestore/docs/reference/rest/v1/projects.databases.collectionGroups.fields/patch;
// Datastore "Manage data retention with TTL policies",
// https://cloud.google.com/datastore/docs/ttl (the same call as
// `gcloud firestore fields ttls update expires_at --collection-group=KIND --enable-ttl`).
package ttladmin

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	firestore "google.golang.org/api/firestore/v1"
)

// Property is the record property the TTL policy applies to: a timestamp,
// absent on records that must never be deleted (docs/design.md, "The record
// and its state machine").
const Property = "expires_at"

// DefaultDatabase is the ID of a project's default database.
const DefaultDatabase = "(default)"

// Policy names one TTL policy: Kind's Property in Database of Project.
type Policy struct {
	// Project is the project ID. Required.
	Project string
	// Database is the database ID; empty means DefaultDatabase.
	Database string
	// Kind is the Datastore kind of the gateway's records. Required.
	Kind string
}

// State is the TTL policy's state as the Admin API reports it.
type State string

// States of a TTL policy. Source: Firestore Admin API, TtlConfig.State,
// https://cloud.google.com/firestore/docs/reference/rest/v1/projects.databases.collectionGroups.fields#state
const (
	// StateOff means the field has no TTL configuration.
	StateOff State = "OFF"
	// StateCreating means the policy applies to new writes and existing
	// records are still being processed.
	StateCreating State = "CREATING"
	// StateActive means the policy applies to every record.
	StateActive State = "ACTIVE"
	// StateNeedsRepair means enabling failed for some existing records; new
	// writes still get the policy. Run Enable again.
	StateNeedsRepair State = "NEEDS_REPAIR"
)

// ErrNotActive is returned by Check when the policy exists but is not ACTIVE
// yet, or does not exist.
var ErrNotActive = errors.New("oncegate: TTL policy not active")

var (
	projectRE = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$|^[a-z0-9.-]+:[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
	// A kind or database ID is one path segment here.
	segmentRE = regexp.MustCompile(`^[^/\s]{1,1000}$`)
)

// Validate reports an error naming the field for a policy the API cannot
// address.
func (p Policy) Validate() error {
	if !projectRE.MatchString(p.Project) {
		return fmt.Errorf("ttl policy: project %q is not a project ID (6–30 lowercase letters, digits or hyphens, starting with a letter)", p.Project)
	}
	if p.Database != "" && !segmentRE.MatchString(p.Database) {
		return fmt.Errorf("ttl policy: database %q must be one path segment without spaces, or empty for %s", p.Database, DefaultDatabase)
	}
	if !segmentRE.MatchString(p.Kind) {
		return fmt.Errorf("ttl policy: kind %q must be a non-empty kind name without '/' or spaces", p.Kind)
	}
	return nil
}

// Name is the field's resource name,
// "projects/<p>/databases/<d>/collectionGroups/<kind>/fields/expires_at".
func (p Policy) Name() string {
	db := p.Database
	if db == "" {
		db = DefaultDatabase
	}
	return "projects/" + p.Project + "/databases/" + db + "/collectionGroups/" + p.Kind + "/fields/" + Property
}

// Enable asks the Admin API to turn the policy on: UpdateField with update
// mask ttlConfig and a field carrying only an empty TTL configuration, so the
// field's indexing is left untouched. It returns the long-running operation's
// name; the policy is CREATING until the operation ends (Check reports it).
// Enabling an active policy again is harmless.
func Enable(ctx context.Context, svc *firestore.Service, p Policy) (string, error) {
	if err := p.Validate(); err != nil {
		return "", err
	}
	op, err := svc.Projects.Databases.CollectionGroups.Fields.
		Patch(p.Name(), &firestore.GoogleFirestoreAdminV1Field{TtlConfig: &firestore.GoogleFirestoreAdminV1TtlConfig{}}).
		UpdateMask("ttlConfig").Context(ctx).Do()
	if err != nil {
		return "", fmt.Errorf("enable ttl policy on %s: %w", p.Name(), err)
	}
	return op.Name, nil
}

// Check reads the field and returns its policy's state. The error matches
// ErrNotActive unless the state is StateActive; an API error is wrapped.
func Check(ctx context.Context, svc *firestore.Service, p Policy) (State, error) {
	if err := p.Validate(); err != nil {
		return "", err
	}
	f, err := svc.Projects.Databases.CollectionGroups.Fields.Get(p.Name()).Context(ctx).Do()
	if err != nil {
		return "", fmt.Errorf("read ttl policy of %s: %w", p.Name(), err)
	}
	state := StateOff
	if f.TtlConfig != nil {
		state = State(f.TtlConfig.State)
	}
	switch state {
	case StateActive:
		return state, nil
	case StateOff:
		return state, fmt.Errorf("%w: %s has no TTL policy; run `oncegate ttl enable`", ErrNotActive, p.Name())
	case StateNeedsRepair:
		return state, fmt.Errorf("%w: %s is NEEDS_REPAIR (some existing records did not get it); run `oncegate ttl enable` again", ErrNotActive, p.Name())
	default:
		return state, fmt.Errorf("%w: %s is %s; existing records are still being processed, check again later", ErrNotActive, p.Name(), state)
	}
}
