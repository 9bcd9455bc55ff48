// Package redact hides credentials in the DSNs and addresses that the backend
// openers of gateenv (sqlenv, redisenv) quote in their errors.
package redact

import (
	"regexp"
	"strings"
)

// DSN hides the credentials in a DSN or address quoted by an error:
// everything before the last '@' (after a leading "scheme://"), since a
// password may hold ',', '@', ':' or '/' and the parts of a host list cannot be
// told from the pieces of such a password, so "h1:1,u:p,w@h2:2" shows as
// "xxxxx@h2:2". The user name before the first ':' is kept when it can only be
// one ("scheme://u:xxxxx@h"; "u:xxxxx@h" when u holds no '@' and no ','
// comes before the '@'), and the value of every password= parameter is hidden
// too.
func DSN(dsn string) string {
	scheme, rest := "", dsn
	if m := urlScheme.FindString(dsn); m != "" {
		scheme, rest = m, dsn[len(m):]
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		info := "xxxxx"
		if user, _, hasPass := strings.Cut(rest[:at], ":"); hasPass && (scheme != "" || !strings.Contains(rest[:at], ",") && !strings.Contains(user, "@")) {
			info = user + ":xxxxx"
		}
		rest = info + rest[at:]
	}
	return scheme + passwordParam(rest)
}

// urlScheme matches a URL's leading "scheme://" (RFC 3986 section 3.1).
var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// passwordParam replaces the value of each password= parameter in s.
func passwordParam(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(strings.ToLower(s), "password=")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+len("password=")] + "xxxxx")
		s = s[i+len("password="):]
		if j := strings.IndexAny(s, "&; "); j >= 0 {
			s = s[j:]
		} else {
			s = ""
		}
	}
}
