package datastoregate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"cloud.google.com/go/datastore"
	"google.golang.org/api/option"

	"github.com/oncegate/oncegate/runtime/gate"
)

// DefaultKind is the entity kind of records when Options.Kind is empty. A TTL
// policy must name this kind (or Options.Kind) and the expires_at property.
const DefaultKind = "OncegateRecord"

// Defaults for Options.
const (
	// DefaultMaxClockSkew is the MaxClockSkew gateenv sets: Google Cloud's
	// instances keep their clocks synchronised by NTP to well under this.
	DefaultMaxClockSkew = time.Second

	DefaultMaxAttempts  = 5
	DefaultRetryBackoff = 20 * time.Millisecond
	maxRetryDelay       = 2 * time.Second
)

// maxNameBytes is the longest key name Datastore accepts, and the longest
// namespace or kind (source: "Limits", Firestore in Datastore mode
// documentation: 1,500 bytes).
const maxNameBytes = 1500

// Options configure a Store. The zero value (or nil) means defaults.
type Options struct {
	// Kind is the entity kind records are stored under. Default DefaultKind. It
	// may not have the reserved form __*__ and is at most 1,500 bytes.
	Kind string
	// Namespace is the Datastore namespace of records. Default "" (the default
	// namespace). Same limits as Kind.
	Namespace string
	// Now is the store's clock: Datastore has no server clock a transaction can
	// read, so leases and expiry are judged on the calling instance's clock.
	// Default time.Now. Times are stored to the microsecond.
	Now func() time.Time
	// MaxClockSkew is the largest difference between the clocks of any two
	// instances sharing the records. A claim takes over a claimed record only
	// once its lease_expiry (and its expires_at) is this far past on the
	// claimant's clock, and Purge deletes a claimed record only then, so an
	// instance whose clock runs ahead of the holder's by at most MaxClockSkew
	// never takes a live claim. The price: a crashed holder's key stays blocked
	// MaxClockSkew longer. Default 0 (the clocks are taken to agree); gateenv
	// sets DefaultMaxClockSkew. Negative is invalid. Datastore gives the
	// high-level client no server time (cloud.google.com/go/datastore does not
	// expose LookupResponse.read_time or CommitResponse.commit_time), hence the
	// margin.
	MaxClockSkew time.Duration
	// MaxAttempts bounds the transaction attempts of one call: the first plus
	// retries after an aborted commit (contention) or a commit whose outcome is
	// unknown. Default DefaultMaxAttempts (5); negative is invalid.
	MaxAttempts int
	// RetryBackoff is the base delay before a retry: retry n waits a random
	// duration between half and all of RetryBackoff·2^(n−1), at most 2 s.
	// Default DefaultRetryBackoff (20 ms); negative is invalid.
	RetryBackoff time.Duration
	// Logger receives one debug line per retried attempt. Default slog.Default().
	Logger *slog.Logger
}

// Store is the Datastore backend. It is safe for concurrent use.
type Store struct {
	c       *datastore.Client
	owned   bool // Close closes c
	kind    string
	ns      string
	now     func() time.Time
	skew    time.Duration // Options.MaxClockSkew
	tries   int
	backoff time.Duration
	log     *slog.Logger
}

var _ gate.Admin = (*Store)(nil)

// New returns a Store on the caller's client, which picks the project and the
// database. The caller keeps ownership of c; Close does not close it. It
// returns an error naming the field when opts is invalid.
func New(c *datastore.Client, opts *Options) (*Store, error) {
	if c == nil {
		return nil, errors.New("datastoregate: nil client")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &Store{c: c, kind: o.Kind, ns: o.Namespace, now: o.Now, skew: o.MaxClockSkew, tries: o.MaxAttempts, backoff: o.RetryBackoff, log: o.Logger}
	if s.kind == "" {
		s.kind = DefaultKind
	}
	for _, f := range []struct{ field, v string }{{"Kind", s.kind}, {"Namespace", s.ns}} {
		if len(f.v) > maxNameBytes || reserved(f.v) || !utf8.ValidString(f.v) {
			return nil, fmt.Errorf("datastoregate: Options.%s: must be valid UTF-8, at most %d bytes and not of the reserved form __*__ (got %.40q)", f.field, maxNameBytes, f.v)
		}
	}
	switch {
	case s.tries < 0:
		return nil, fmt.Errorf("datastoregate: Options.MaxAttempts: must be at least 1 (got %d); leave zero for the default %d", s.tries, DefaultMaxAttempts)
	case s.tries == 0:
		s.tries = DefaultMaxAttempts
	}
	if s.skew < 0 {
		return nil, fmt.Errorf("datastoregate: Options.MaxClockSkew: must not be negative (got %v); leave zero for none", s.skew)
	}
	switch {
	case s.backoff < 0:
		return nil, fmt.Errorf("datastoregate: Options.RetryBackoff: must not be negative (got %v); leave zero for the default %v", s.backoff, DefaultRetryBackoff)
	case s.backoff == 0:
		s.backoff = DefaultRetryBackoff
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s, nil
}

// Open creates a client of projectID and databaseID ("" or "(default)" for the
// default database) and returns a Store that closes it on Close. The client
// honours DATASTORE_EMULATOR_HOST. clientOpts go to datastore.NewClientWithDatabase.
func Open(ctx context.Context, projectID, databaseID string, opts *Options, clientOpts ...option.ClientOption) (*Store, error) {
	if databaseID == "(default)" {
		databaseID = datastore.DefaultDatabaseID
	}
	c, err := datastore.NewClientWithDatabase(ctx, projectID, databaseID, clientOpts...)
	if err != nil {
		return nil, fmt.Errorf("datastoregate: open project %q database %q: %w", projectID, databaseID, err)
	}
	s, err := New(c, opts)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// Close closes the client if Open created it; otherwise it does nothing.
func (s *Store) Close() error {
	if s.owned {
		return s.c.Close()
	}
	return nil
}

// clock is the store's time, to the microsecond Datastore keeps.
func (s *Store) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// dsKey is the entity key of a record key: gate.StoreKey(key, 1500), or its
// hashed form when the name would have Datastore's reserved form __*__.
func (s *Store) dsKey(key string) *datastore.Key {
	name := gate.StoreKey(key, maxNameBytes)
	if reserved(name) {
		// The same hashed form StoreKey uses, so the mapping stays injective: a
		// literal name can never start with the hashed prefix.
		sum := sha256.Sum256([]byte(key))
		name = "og-sha256:" + hex.EncodeToString(sum[:])
	}
	k := datastore.NameKey(s.kind, name, nil)
	k.Namespace = s.ns
	return k
}

// reserved reports whether name has Datastore's reserved form __*__.
func reserved(name string) bool {
	return len(name) >= 4 && strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__")
}
