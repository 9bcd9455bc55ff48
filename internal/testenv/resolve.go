package testenv

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Environment variables read by this package.
const (
	// envCI, when true (strconv.ParseBool), turns every missing server into a failure.
	envCI = "CI"
	// envForcePrivate, when true, skips the environment variables and default ports
	// and starts private servers.
	envForcePrivate = "ONCEGATE_TEST_FORCE_PRIVATE"
)

// probeTimeout bounds one ping of a configured or default server.
const probeTimeout = 3 * time.Second

// resolver finds one kind of shared server, once per test binary.
type resolver struct {
	name       string // "Redis", "PostgreSQL" or "MySQL", for messages
	envVar     string
	defaultDSN string
	normalize  func(dsn string) (string, error) // optional: rewrites the variable's value
	ping       func(ctx context.Context, dsn string) error
	private    func() (*Server, error)

	once   sync.Once
	dsn    string
	source string  // where dsn came from: "env", "default" or "private"
	server *Server // the private server, when one was started
	err    error   // why there is no server
	fatal  bool    // the variable names a server that does not answer: fail even outside CI
}

// get returns the server's DSN, or skips or fails the test.
func (r *resolver) get(t testing.TB) string {
	t.Helper()
	r.once.Do(func() { r.resolve(t) })
	if r.err != nil {
		unavailable(t, r.name, r.fatal, r.err)
	}
	return r.dsn
}

// resolve walks the variable, the default port and a private server in that order.
func (r *resolver) resolve(t testing.TB) {
	var reasons []string
	if truthy(os.Getenv(envForcePrivate)) {
		reasons = append(reasons, envForcePrivate+" is set")
	} else if v := os.Getenv(r.envVar); v != "" {
		dsn, err := v, error(nil)
		if r.normalize != nil {
			dsn, err = r.normalize(v)
		}
		if err == nil {
			err = probe(r.ping, dsn)
		}
		if err != nil {
			r.err, r.fatal = fmt.Errorf("%s=%s: %w", r.envVar, redact(v), err), true
			return
		}
		r.dsn, r.source = dsn, "env"
		t.Logf("testenv: %s: using %s=%s", r.name, r.envVar, redact(v))
		return
	} else {
		err := probe(r.ping, r.defaultDSN)
		if err == nil {
			r.dsn, r.source = r.defaultDSN, "default"
			return
		}
		reasons = append(reasons, fmt.Sprintf("%s is unset; default %s: %v", r.envVar, redact(r.defaultDSN), err))
	}
	s, err := r.private()
	if err != nil {
		r.err = fmt.Errorf("%s; private server: %w", strings.Join(reasons, "; "), err)
		return
	}
	registerShared(s)
	r.dsn, r.source, r.server = s.DSN(), "private", s
	t.Logf("testenv: %s: started private %s on %s in %s (%s)", r.name, s.cmd, s.Addr(), s.Dir(), strings.Join(reasons, "; "))
}

// probe pings dsn within probeTimeout.
func probe(ping func(context.Context, string) error, dsn string) error {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	return ping(ctx, dsn)
}

// unavailable skips the test, or fails it when fatal or under CI=true.
func unavailable(t testing.TB, name string, fatal bool, err error) {
	t.Helper()
	if fatal {
		t.Fatalf("testenv: no %s server: %v", name, err)
	}
	Missing(t, "testenv: no %s server: %v", name, err)
}

// Missing reports something a test needs and this machine lacks (a server, a
// tool, an emulator): it fails the test under CI=true (strconv.ParseBool), where
// nothing may be missing, and skips it elsewhere, saying why.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if truthy(os.Getenv(envCI)) {
		t.Fatalf(format+" (CI=true: nothing may be missing)", args...)
	}
	t.Skipf(format+" (skipped because CI is not true)", args...)
}

// truthy reports whether an environment value parses as a true boolean.
func truthy(v string) bool {
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

var keywordPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('[^']*'|\S+)`)

// redact hides the password in a URL, go-sql-driver/mysql or key=value DSN, so
// messages can name the server without leaking a secret.
func redact(dsn string) string {
	if strings.Contains(dsn, "://") {
		if u, err := url.Parse(dsn); err == nil {
			return u.Redacted()
		}
		return "(unparsable URL)"
	}
	if keywordPassword.MatchString(dsn) {
		return keywordPassword.ReplaceAllString(dsn, "${1}xxxxx")
	}
	// user:password@net(addr)/db: like the driver's parser, the credentials end at
	// the last '@' before the last '/'.
	end := len(dsn)
	if i := strings.LastIndex(dsn, "/"); i >= 0 {
		end = i
	}
	if at := strings.LastIndex(dsn[:end], "@"); at >= 0 {
		if colon := strings.Index(dsn[:at], ":"); colon >= 0 {
			return dsn[:colon+1] + "xxxxx" + dsn[at:]
		}
	}
	return dsn
}
