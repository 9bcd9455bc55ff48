// Package dotted compares the dotted version numbers servers report (Redis's
// redis_version, MariaDB's VERSION()) against the floor a backend needs.
package dotted

import (
	"strconv"
	"strings"
)

// AtLeast reports whether v, a dotted version such as "7.0.15" or
// "10.11.6-MariaDB", is at least major.minor. Only its first two numbers count;
// a version it cannot read is not at least anything.
func AtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	mi := parts[1]
	if i := strings.IndexFunc(mi, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		mi = mi[:i] // "10.5-MariaDB"
	}
	a, err1 := strconv.Atoi(parts[0])
	b, err2 := strconv.Atoi(mi)
	if err1 != nil || err2 != nil {
		return false
	}
	return a > major || (a == major && b >= minor)
}
