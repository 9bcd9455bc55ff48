package redisgate

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// decodeRecord turns a script's flat field/value list (as HGETALL returns it for
// a record in the old hash format) into a gate.Record for key. Times are UTC
// epoch milliseconds; an absent time field is the zero time.
func decodeRecord(key string, v any) (gate.Record, error) {
	list, ok := v.([]any)
	if !ok || len(list)%2 != 0 {
		return gate.Record{}, fmt.Errorf("record reply: want a field/value list, got %T", v)
	}
	r := gate.Record{Key: key}
	for i := 0; i < len(list); i += 2 {
		name, _ := list[i].(string)
		val, ok := list[i+1].(string)
		if !ok {
			return gate.Record{}, fmt.Errorf("record field %q: want a string, got %T", name, list[i+1])
		}
		var err error
		switch name {
		case "state":
			r.State = gate.State(val)
		case "fence":
			r.Fence, err = strconv.ParseInt(val, 10, 64)
		case "lease_expiry":
			r.LeaseExpiry, err = parseMillis(val)
		case "expires_at":
			r.ExpiresAt, err = parseMillis(val)
		case "done_at":
			r.DoneAt, err = parseMillis(val)
		case "claim_token":
			r.ClaimToken = val
		case "owner":
			r.Owner = val
		case "fingerprint":
			if val != "" {
				r.Fingerprint = []byte(val)
			}
		case "result":
			if val != "" {
				r.Result = []byte(val)
			}
		}
		if err != nil {
			return gate.Record{}, fmt.Errorf("record field %q: %w", name, err)
		}
	}
	return r, nil
}

func parseMillis(s string) (time.Time, error) {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(ms).UTC(), nil
}

// reply splits a script's {status, payload} array reply.
func reply(v any) (int64, any, error) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return 0, nil, fmt.Errorf("script reply: want {status, …}, got %T", v)
	}
	status, ok := list[0].(int64)
	if !ok {
		return 0, nil, fmt.Errorf("script reply status: want an integer, got %T", list[0])
	}
	var payload any
	if len(list) > 1 {
		payload = list[1]
	}
	return status, payload, nil
}

// valueVersion starts every record value; see doc.go, "Records".
const valueVersion = "og1 "

// encodeClaim returns the value a claim at fence 1 stores: state claimed, lease
// field ttlMillis (the lease expires ttlMillis before the key), no done_at, and
// the token, owner and fingerprint. The claim script also reads the request from
// it.
func encodeClaim(req gate.ClaimRequest, ttlMillis int64) string {
	var b strings.Builder
	b.Grow(len(valueVersion) + 48 + len(req.Token) + len(req.Owner) + len(req.Fingerprint))
	b.WriteString(valueVersion)
	b.WriteString("claimed 1 ")
	b.WriteString(strconv.FormatInt(ttlMillis, 10))
	b.WriteString("  ")
	b.WriteString(strconv.Itoa(len(req.Token)))
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(len(req.Owner)))
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(len(req.Fingerprint)))
	b.WriteByte('\n')
	b.WriteString(req.Token)
	b.WriteString(req.Owner)
	b.Write(req.Fingerprint)
	return b.String()
}

// decodeReply decodes a script's "<expiry> <value>" reply, expiry being the
// key's PEXPIRETIME (-1 for none).
func decodeReply(key, s string) (gate.Record, error) {
	e, v, ok := strings.Cut(s, " ")
	if !ok {
		return gate.Record{}, fmt.Errorf("record reply %.40q: want expiry and value", s)
	}
	expiry, err := strconv.ParseInt(e, 10, 64)
	if err != nil {
		return gate.Record{}, fmt.Errorf("record reply expiry: %w", err)
	}
	return decodeValue(key, v, expiry)
}

// errNotRecord is wrapped by decodeValue's errors for a value that is not a record.
var errNotRecord = errors.New("the key holds a string that is not an oncegate record")

// decodeValue decodes a record value (doc.go, "Records") of key whose Redis key
// expires at expiry (epoch ms; negative: no TTL). With a TTL, expires_at is the
// expiry and the lease and done fields are milliseconds before it; without one
// they are epoch milliseconds and there is no expires_at.
func decodeValue(key, v string, expiry int64) (gate.Record, error) {
	bad := func(why string) (gate.Record, error) {
		return gate.Record{}, fmt.Errorf("%w: %s", errNotRecord, why)
	}
	head, body, ok := strings.Cut(v, "\n")
	if !ok || !strings.HasPrefix(head, valueVersion) {
		return bad("no og1 header")
	}
	f := strings.Split(head[len(valueVersion):], " ")
	if len(f) != 7 {
		return bad(fmt.Sprintf("%d header fields, want 7", len(f)))
	}
	var n [6]int64
	for i, s := range f[1:] {
		if s == "" && (i == 1 || i == 2) {
			n[i] = -1 << 63 // none
			continue
		}
		x, err := strconv.ParseInt(s, 10, 64)
		if err != nil || (x < 0 && i != 1 && i != 2) {
			return bad(fmt.Sprintf("header field %d is %q", i+2, s))
		}
		n[i] = x
	}
	lt, lo, lf := n[3], n[4], n[5]
	if end := int64(len(body)); lt > end || lo > end-lt || lf > end-lt-lo { // no sum that can overflow
		return bad("lengths past the value's end")
	}
	r := gate.Record{Key: key, State: gate.State(f[0]), Fence: n[0]}
	switch r.State {
	case gate.StateClaimed, gate.StateDone, gate.StateFailed, gate.StateUnknown:
	default:
		return bad(fmt.Sprintf("state %q", f[0]))
	}
	at := func(x int64) time.Time {
		switch {
		case x == -1<<63:
			return time.Time{}
		case expiry >= 0:
			return time.UnixMilli(expiry - x).UTC()
		default:
			return time.UnixMilli(x).UTC()
		}
	}
	r.LeaseExpiry, r.DoneAt = at(n[1]), at(n[2])
	if expiry >= 0 {
		r.ExpiresAt = time.UnixMilli(expiry).UTC()
	}
	r.ClaimToken = body[:lt]
	r.Owner = body[lt : lt+lo]
	if lf > 0 {
		r.Fingerprint = []byte(body[lt+lo : lt+lo+lf])
	}
	if res := body[lt+lo+lf:]; res != "" {
		r.Result = []byte(res)
	}
	return r, nil
}
