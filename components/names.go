package components

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/oncegate/oncegate/sizing"
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
	TTLField = "expires_at"
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
)

// Pulumi type tokens of the components.
const (
	typeConsumer         = "oncegate:gcp:Consumer"
	typeProjectServices  = "oncegate:gcp:ProjectServices"
	typePushSubscription = "oncegate:gcp:PushSubscription"
	typeTTLPolicy        = "oncegate:gcp:TTLPolicy"
	typeService          = "oncegate:gcp:Service"
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
