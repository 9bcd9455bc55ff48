package datastoregate

import (
	"bytes"
	"fmt"
	"time"
	"unicode/utf8"

	"cloud.google.com/go/datastore"

	"github.com/oncegate/oncegate/runtime/gate"
)

// Property names: docs/design.md's record fields, snake_case.
const (
	propKey         = "key"
	propState       = "state"
	propFence       = "fence"
	propLeaseExpiry = "lease_expiry"
	propExpiresAt   = "expires_at"
	propDoneAt      = "done_at"
	propClaimToken  = "claim_token"
	propOwner       = "owner"
	propFingerprint = "fingerprint"
	propResult      = "result"
)

// maxEntityBytes is Datastore's entity size limit, 1 MiB less 4 bytes, and
// entityOverhead a generous allowance for property names, fixed-size fields and
// encoding (source: "Limits", Firestore in Datastore mode documentation).
const (
	maxEntityBytes = 1<<20 - 4
	entityOverhead = 1024
)

// checkSize refuses a record too large to store before any RPC is spent on it.
func checkSize(r gate.Record) error {
	n := len(r.Key) + len(r.ClaimToken) + len(r.Owner) + len(r.Fingerprint) + len(r.Result) + entityOverhead
	if n > maxEntityBytes {
		return fmt.Errorf("datastoregate: key %.40q: record is about %d bytes (result %d); a Datastore entity holds at most %d",
			r.Key, n, len(r.Result), maxEntityBytes)
	}
	return nil
}

// entity is a record as a Datastore entity. Only state and expires_at are
// indexed: state for ListUnresolved, expires_at for Purge and the TTL policy.
// Everything else, including the original key (which may exceed the 1,500
// bytes an indexed string may hold), the fingerprint and the result, is
// excluded from indexes.
type entity struct{ rec gate.Record }

var _ datastore.PropertyLoadSaver = (*entity)(nil)

// Save implements datastore.PropertyLoadSaver. Zero times and empty optional
// fields are left out, so an unknown record has no expires_at and matches
// neither the TTL policy nor Purge's query.
func (e *entity) Save() ([]datastore.Property, error) {
	r := e.rec
	var key any = r.Key
	if !utf8.ValidString(r.Key) {
		key = []byte(r.Key) // string values must be UTF-8
	}
	ps := []datastore.Property{
		{Name: propKey, Value: key, NoIndex: true},
		{Name: propState, Value: string(r.State)},
		{Name: propFence, Value: r.Fence, NoIndex: true},
		{Name: propLeaseExpiry, Value: r.LeaseExpiry.UTC(), NoIndex: true},
		{Name: propClaimToken, Value: r.ClaimToken, NoIndex: true},
		{Name: propOwner, Value: r.Owner, NoIndex: true},
	}
	if !r.ExpiresAt.IsZero() {
		ps = append(ps, datastore.Property{Name: propExpiresAt, Value: r.ExpiresAt.UTC()})
	}
	if !r.DoneAt.IsZero() {
		ps = append(ps, datastore.Property{Name: propDoneAt, Value: r.DoneAt.UTC(), NoIndex: true})
	}
	if len(r.Fingerprint) > 0 {
		ps = append(ps, datastore.Property{Name: propFingerprint, Value: r.Fingerprint, NoIndex: true})
	}
	if r.Result != nil {
		ps = append(ps, datastore.Property{Name: propResult, Value: r.Result, NoIndex: true})
	}
	return ps, nil
}

// Load implements datastore.PropertyLoadSaver. Unknown properties are ignored;
// a known one of the wrong type is an error.
func (e *entity) Load(ps []datastore.Property) error {
	var r gate.Record
	for _, p := range ps {
		var err error
		switch p.Name {
		case propKey:
			switch v := p.Value.(type) {
			case string:
				r.Key = v
			case []byte:
				r.Key = string(v)
			default:
				err = typeErr(p, "string")
			}
		case propState:
			var s string
			s, err = as[string](p)
			r.State = gate.State(s)
		case propFence:
			r.Fence, err = as[int64](p)
		case propLeaseExpiry:
			r.LeaseExpiry, err = asTime(p)
		case propExpiresAt:
			r.ExpiresAt, err = asTime(p)
		case propDoneAt:
			r.DoneAt, err = asTime(p)
		case propClaimToken:
			r.ClaimToken, err = as[string](p)
		case propOwner:
			r.Owner, err = as[string](p)
		case propFingerprint:
			r.Fingerprint, err = as[[]byte](p)
		case propResult:
			r.Result, err = as[[]byte](p)
			if r.Result == nil {
				r.Result = []byte{}
			}
		}
		if err != nil {
			return err
		}
	}
	e.rec = r
	return nil
}

func as[T any](p datastore.Property) (T, error) {
	if p.Value == nil {
		var zero T
		return zero, nil
	}
	v, ok := p.Value.(T)
	if !ok {
		var zero T
		return zero, typeErr(p, fmt.Sprintf("%T", zero))
	}
	return v, nil
}

func asTime(p datastore.Property) (time.Time, error) {
	t, err := as[time.Time](p)
	return t.UTC(), err
}

func typeErr(p datastore.Property, want string) error {
	return fmt.Errorf("datastoregate: property %s is %T, want %s", p.Name, p.Value, want)
}

// normalize rounds r's times to the microsecond and to UTC, as Datastore
// stores them, so the record a call returns equals the one it stored.
func normalize(r gate.Record) gate.Record {
	for _, t := range []*time.Time{&r.LeaseExpiry, &r.ExpiresAt, &r.DoneAt} {
		if !t.IsZero() {
			*t = t.UTC().Truncate(time.Microsecond)
		}
	}
	return r
}

// sameRecord reports whether a and b are the same stored record, field by field.
func sameRecord(a, b gate.Record) bool {
	return a.Key == b.Key && a.State == b.State && a.Fence == b.Fence &&
		a.LeaseExpiry.Equal(b.LeaseExpiry) && a.ExpiresAt.Equal(b.ExpiresAt) && a.DoneAt.Equal(b.DoneAt) &&
		a.ClaimToken == b.ClaimToken && a.Owner == b.Owner &&
		bytes.Equal(a.Fingerprint, b.Fingerprint) && bytes.Equal(a.Result, b.Result)
}
