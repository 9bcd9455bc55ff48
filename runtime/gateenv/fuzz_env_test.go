package gateenv_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// FuzzNewEnvironment feeds arbitrary values to every variable New reads. The
// sql and redis openers (linked through allbackends, main_test.go) run for
// real under a cancelled context, so their parsing is exercised but nothing is
// dialled; datastore is replaced by a fake (its client would look for
// credentials). New never panics; an error is
// one line and never shows a DSN's password; a success only comes from a
// backend that needs no connection, with a namespace of the documented form,
// and its options build a Gate.
func FuzzNewEnvironment(f *testing.F) {
	f.Add("memory", "orders", "60s", "2h", "20s", "5m", "", "", "")
	f.Add("sql", "orders", "60s", "", "", "30s", "", "", "postgres://u:sekrit-pw@h/db")
	f.Add("sql", "orders", "60s", "", "", "30s", "", "", "mysql://u:sekrit-pw@h:x/db")
	f.Add("sql", "orders", "60s", "", "", "30s", "", "", "sqlite:/tmp/x.db?_pragma=busy_timeout(1)")
	f.Add("redis", "orders", "60s", "", "", "30s", "", "redis://u:sekrit-pw@h:6379/0", "")
	f.Add("redis", "orders", "60s", "", "", "30s", "", "h1:1,h2:2,[::1]:3", "")
	f.Add("redis", "o", "60s", "", "", "30s", "", "h:99999\r\nFLUSHALL", "")
	f.Add("redis", "orders", "60s", "", "", "30s", "", "user:sekrit-pw@h:6379", "")
	f.Add("redis", "orders", "60s", "", "", "30s", "", "h1:1,u:sekrit-pw@h2:x", "")
	f.Add("sql", "orders", "60s", "", "", "30s", "", "", "postgres://u:se@cret-pw@h:x/db")
	f.Add("sql", "orders", "60s", "", "", "30s", "", "", "oracle://h/db?password=sekrit-pw")
	f.Add("redis", "orders", "60s", "", "", "30s", "", "redis://u:S3cret,XYZ@127.0.0.1:6379", "")
	f.Add("redis", "orders", "60s", "", "", "30s", "", "127.0.0.1:6379,u:S3cret,XYZ@h:1", "")
	f.Add("redis", "orders", "60s", "", "", "30s", "", "127.0.0.1:6379,u:S3cret:xy,XYZ@h:1", "")
	f.Add("sql", "orders", "60s", "", "", "30s", "", "", "postgres://u:S3cret,XYZ@h1:1,h2:x/db")
	f.Add("datastore", "a:b", "1s", "-1s", "1d", "x", "maybe", "", "")
	f.Add("memory", "", "", "", "", "", "1", "", "")
	f.Add("memory", "orders", "15m", "0s", "0s", "15m", "0", "", "")
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	f.Fuzz(func(t *testing.T, backend, ns, lease, ttl, heartbeat, work, disabled, redisAddr, dsn string) {
		env := map[string]string{
			gateenv.EnvBackend: backend, gateenv.EnvNamespace: ns, gateenv.EnvDisabled: disabled,
			"ONCEGATE_LEASE": lease, "ONCEGATE_TTL": ttl, "ONCEGATE_HEARTBEAT": heartbeat, "ONCEGATE_WORK_DEADLINE": work,
			gateenv.EnvRedisAddr: redisAddr, gateenv.EnvSQLDSN: dsn, gateenv.EnvProject: "p",
			gateenv.EnvOIDCDisabled: "1",
		}
		reg := gateenv.Backends()
		reg["datastore"] = func(context.Context, func(string) string) (gate.Backend, func() error, error) {
			return memgate.New(nil), nil, nil
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // nothing may be dialled
		c, err := gateenv.New(ctx, &gateenv.Options{Getenv: func(k string) string { return env[k] }, Backends: reg, Logger: quiet})
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error over several lines: %q", msg)
			}
			for _, v := range []string{dsn, redisAddr} {
				for _, pw := range secrets(v) {
					if strings.Contains(msg, pw) {
						t.Fatalf("error shows %q of a password: %q", pw, msg)
					}
				}
			}
			return
		}
		defer c.Close()
		name := strings.TrimSpace(backend)
		if !c.Disabled && name != "memory" && name != "datastore" {
			t.Fatalf("backend %q opened under a cancelled context", backend)
		}
		if got := c.Gate.Namespace; len(got) > 256 || strings.ContainsFunc(got, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/", r))
		}) {
			t.Fatalf("namespace %q accepted", got)
		}
		if c.Disabled {
			return
		}
		if err := c.Plan.Validate(); err != nil {
			t.Fatalf("an unsafe plan was accepted: %v", err)
		}
		if _, err := c.NewGate(); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("accepted options do not build a Gate: %v", err)
		}
	})
}

// acceptedForms is what errors say the variables accept.
const acceptedForms = sqlgate.AcceptedSchemes + " host:port, a comma-separated list of them (Redis Cluster), or a redis:// or rediss:// URL"

// secrets returns what of v's credentials an error must not show. A password
// may hold ',', so every reading of v counts: for each '@', the user
// information is the text before it from just after a leading "scheme://" (a
// URL's starts there), or else from the start of v or of any comma-separated
// element. Of each reading "user:password" (or "secret" with no ':'), the
// password and each of its '@'-, ':'-, '/'- and ','-separated pieces count when
// at least 6 bytes long and found nowhere else in v nor in the accepted forms
// the errors quote.
func secrets(v string) []string {
	var out []string
	scheme, rest, ok := strings.Cut(v, "://")
	if !ok || scheme == "" || strings.ContainsFunc(scheme, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("+.-", r))
	}) {
		rest = v
	}
	for at := range len(rest) {
		if rest[at] != '@' {
			continue
		}
		starts := []int{0}
		if len(rest) == len(v) { // not a URL: any element may begin the user information
			for i := range at {
				if rest[i] == ',' {
					starts = append(starts, i+1)
				}
			}
		}
		for _, from := range starts {
			user, pw, ok := strings.Cut(rest[from:at], ":")
			if !ok {
				user, pw = "", user
			}
			elsewhere := strings.Replace(v, pw, "\x00", 1) + user
			for _, s := range append([]string{pw}, strings.FieldsFunc(pw, func(r rune) bool { return strings.ContainsRune("@:/,", r) })...) {
				if len(s) >= 6 && !strings.Contains(elsewhere, s) && !strings.Contains(acceptedForms, s) {
					out = append(out, s)
				}
			}
		}
	}
	return out
}
