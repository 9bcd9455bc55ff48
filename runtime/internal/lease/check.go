package lease

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Field is one named duration of an options type, for NonNegative.
type Field struct {
	Name string        // the field's name, e.g. "Lease"
	Val  time.Duration // its value as the caller set it
}

// NonNegative returns an error naming the first negative field as
// "<typ>.<Name>: must be zero (default) or positive, got <Val>", or nil. typ
// names the options type, e.g. "gate.Options".
func NonNegative(typ string, fields ...Field) error {
	for _, f := range fields {
		if f.Val < 0 {
			return fmt.Errorf("%s.%s: must be zero (default) or positive, got %s", typ, f.Name, f.Val)
		}
	}
	return nil
}

// Interval checks a renewal interval iv, the field name of typ, against lease:
// iv must be positive and at most lease/parts, so a failed renewal still
// leaves time for another before the lease lapses. parts is 2 or 3 (the
// fraction is spelled "half" or "a third"); fix ends the message with how to
// correct it. The error reads "<typ>.<name>: <iv> must be positive and at most
// <fraction> of Lease <lease> (<lease/parts>); <fix>".
func Interval(typ, name string, iv, lease time.Duration, parts int, fix string) error {
	if iv > 0 && iv <= lease/time.Duration(parts) {
		return nil
	}
	frac := map[int]string{2: "half", 3: "a third"}[parts]
	if frac == "" {
		frac = fmt.Sprintf("1/%d", parts)
	}
	return fmt.Errorf("%s.%s: %s must be positive and at most %s of Lease %s (%s); %s", typ, name, iv, frac, lease, lease/time.Duration(parts), fix)
}

// DefaultOwner returns the holder name both options types default Owner to:
// "<hostname>/<pid>" (the hostname empty when the system cannot tell it).
func DefaultOwner() string {
	host, _ := os.Hostname()
	return host + "/" + strconv.Itoa(os.Getpid())
}
