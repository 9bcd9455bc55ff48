package components

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/oncegate/oncegate/internal/ttladmin"
	"github.com/oncegate/oncegate/sizing"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/kms"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/pubsub"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// Defaults shared by the components.
const (
	// DefaultKind is the Datastore kind of the gateway's records when none is
	// given (ONCEGATE_DATASTORE_KIND).
	DefaultKind = "OncegateRecord"
	// DefaultDatabase is the ID of a project's default Firestore database.
	DefaultDatabase = "(default)"
	// TTLField is the record property the TTL policy applies to (docs/design.md,
	// "The record and its state machine"): a timestamp, absent for records
	// that must never be deleted.
	TTLField = ttladmin.Property
	// DefaultDeadLetterRetention keeps dead letters for 31 days, the longest
	// retention Pub/Sub allows. Source: Pub/Sub subscription properties,
	// https://cloud.google.com/pubsub/docs/subscription-properties
	DefaultDeadLetterRetention = 31 * 24 * time.Hour
)

// IAM roles the components grant.
const (
	rolePublisher    = "roles/pubsub.publisher"
	roleSubscriber   = "roles/pubsub.subscriber"
	roleTokenCreator = "roles/iam.serviceAccountTokenCreator"
	roleInvoker      = "roles/run.invoker"
	roleDatastore    = "roles/datastore.user"
	roleSQLClient    = "roles/cloudsql.client"
	roleSecret       = "roles/secretmanager.secretAccessor"
	roleKMS          = "roles/cloudkms.cryptoKeyEncrypterDecrypter"
)

// Pulumi type tokens of the components.
const (
	typeConsumer         = "oncegate:gcp:Consumer"
	typeProjectServices  = "oncegate:gcp:ProjectServices"
	typePushSubscription = "oncegate:gcp:PushSubscription"
	typeTTLPolicy        = "oncegate:gcp:TTLPolicy"
	typeService          = "oncegate:gcp:Service"
	typeAlerts           = "oncegate:gcp:Alerts"
)

// googleDuration writes d the way Google APIs take durations: seconds with up
// to nine fractional digits and an "s" ("10s", "3.5s").
func googleDuration(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// accountID derives a service account ID (6–30 characters of [a-z0-9-],
// starting with a letter, not ending with a hyphen) from a component name and
// a suffix. Long names keep a prefix and a short hash so IDs stay distinct.
// Source: IAM service account ID rules,
// https://cloud.google.com/iam/docs/service-accounts-create
func accountID(name, suffix string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name + "-" + suffix) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	id := strings.Trim(b.String(), "-")
	for strings.Contains(id, "--") {
		id = strings.ReplaceAll(id, "--", "-")
	}
	if id == "" || id[0] < 'a' || id[0] > 'z' || len(id) < 6 {
		id = "og-" + id
	}
	if len(id) < 6 {
		id += strings.Repeat("0", 6-len(id))
	}
	if len(id) > 30 {
		sum := sha256.Sum256([]byte(name + "/" + suffix))
		id = strings.TrimRight(id[:23], "-") + "-" + hex.EncodeToString(sum[:])[:6]
	}
	return id
}

// validAccountID reports an error for an explicit service account ID that IAM
// would refuse.
func validAccountID(field, id string) error {
	ok := len(id) >= 6 && len(id) <= 30 && id[0] >= 'a' && id[0] <= 'z' && id[len(id)-1] != '-'
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("%s: %q must be 6–30 lowercase letters, digits or hyphens, start with a letter and not end with a hyphen; fix it or leave it empty to derive one", field, id)
	}
	return nil
}

// resolvePlan validates p and returns it with defaults applied.
func resolvePlan(p sizing.Plan) (sizing.Plan, error) {
	if err := p.Validate(); err != nil {
		return sizing.Plan{}, err
	}
	return p.WithDefaults(), nil
}

// tie returns in as an output that also waits for r's registration. A value
// made with pulumi.String(...).ToStringOutput() belongs to no program, so
// Pulumi does not wait for it, nor for an apply on it, before the program (or
// a mocks test) returns; tied to the component it is awaited like any other
// output.
func tie(r pulumi.Resource, in pulumi.StringInput) pulumi.StringOutput {
	return pulumi.All(r.URN(), in).ApplyT(func(v []any) string { return v[1].(string) }).(pulumi.StringOutput)
}

// tieMap is tie for a fixed map.
func tieMap(r pulumi.Resource, m map[string]string) pulumi.StringMapOutput {
	return r.URN().ApplyT(func(pulumi.URN) map[string]string { return m }).(pulumi.StringMapOutput)
}

// kmsGrant lets member encrypt and decrypt with key, as a CMEK topic or
// service needs. Source: Pub/Sub "Configure message encryption",
// https://cloud.google.com/pubsub/docs/encryption ("Using CMEK": grant the
// Pub/Sub service agent roles/cloudkms.cryptoKeyEncrypterDecrypter).
func kmsGrant(ctx *pulumi.Context, name string, key, member pulumi.StringInput, opts ...pulumi.ResourceOption) (*kms.CryptoKeyIAMMember, error) {
	return kms.NewCryptoKeyIAMMember(ctx, name, &kms.CryptoKeyIAMMemberArgs{
		CryptoKeyId: key,
		Role:        pulumi.String(roleKMS),
		Member:      member,
	}, opts...)
}

// storagePolicy is a topic's messageStoragePolicy allowing regions.
func storagePolicy(regions []string) *pubsub.TopicMessageStoragePolicyArgs {
	return &pubsub.TopicMessageStoragePolicyArgs{AllowedPersistenceRegions: pulumi.ToStringArray(regions)}
}

var regionRE = regexp.MustCompile(`^[a-z]+(-[a-z]+)+[0-9]+$`)

// validRegions reports an error for a list entry that is not a Google Cloud
// region name such as "europe-west1".
func validRegions(field string, regions []string) error {
	for _, r := range regions {
		if !regionRE.MatchString(r) {
			return fmt.Errorf("%s: %q is not a region such as europe-west1 or us-central1", field, r)
		}
	}
	return nil
}
