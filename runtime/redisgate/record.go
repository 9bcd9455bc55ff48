package redisgate

import (
	"fmt"
	"strconv"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
)

// decodeRecord turns a script's flat field/value list (as HGETALL returns it)
// into a gate.Record for key. Times are UTC epoch milliseconds; an absent time
// field is the zero time.
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
