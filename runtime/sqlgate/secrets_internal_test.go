package sqlgate

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// dsnSecrets returns what of dsn's password an error must not show: the whole
// password (everything between the first ':' of the user information and the
// last '@' of the authority) and each of its '@'-, ':'- and '/'-separated
// pieces, when at least 6 bytes long and found nowhere else in the DSN (its
// scheme included: a piece "stgres" of the password cannot be told apart from
// the "postgres" every error names).
func dsnSecrets(dsn string) []string {
	scheme, rest, ok := strings.Cut(dsn, "://")
	if !ok {
		return nil
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return nil
	}
	user, pass, ok := strings.Cut(rest[:at], ":")
	if !ok {
		return nil
	}
	elsewhere := scheme + "\x00" + user + "\x00" + rest[at:]
	var out []string
	for _, s := range append([]string{pass}, strings.FieldsFunc(pass, func(r rune) bool { return strings.ContainsRune("@:/", r) })...) {
		if len(s) >= 6 && !strings.Contains(elsewhere, s) {
			out = append(out, s)
		}
	}
	return out
}

// FuzzPostgresDSNKeepsPasswordOutOfErrors: openDB parses a PostgreSQL DSN
// (without connecting) and its error never shows the password or a piece of
// it, whatever the DSN holds ('@', '/', ':', '%', spaces in the password).
func FuzzPostgresDSNKeepsPasswordOutOfErrors(f *testing.F) {
	for _, s := range []string{
		"postgres://u:se@cret-pw@127.0.0.1:x/db", "postgres://u:hunter2@h:5432/d?sslmode=bogus",
		"postgresql://u:sekrit pw@[::1/db", "postgres://u:se%zzcret@h/db", "postgres://u:se/cret-pw@h:1/db",
		"postgres://h/db?password=sekritpw&sslmode=bogus", "postgres://u:a@b@c@hunter2@h:q/d",
		"postgres://postgres:12/S3crXYZ@127.0.0.1:5432/test", "postgres://u:12?sekrit-pw@h/db", "postgres://u:12#sekrit-pw@h/db",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
			return
		}
		db, _, err := openDB(dsn)
		if err == nil {
			_ = db.Close()
			// What pgx will quote in a connect error holds no piece either.
			cfg, err := pgx.ParseConfig(postgresURL(dsn))
			if err != nil {
				t.Fatalf("openDB(%q) accepted what pgx refuses: %v", dsn, err)
			}
			// Each field on its own: fmt.Sprint would join adjacent strings, and
			// a password piece could then span two fields ("u000" + "0").
			quoted := []string{cfg.Host, fmt.Sprint(cfg.Port), cfg.User, cfg.Database, fmt.Sprint(cfg.RuntimeParams)}
			for _, s := range dsnSecrets(dsn) {
				for _, q := range quoted {
					if strings.Contains(q, s) {
						t.Fatalf("openDB(%q) accepted a DSN whose host, user, database or parameters %q hold %q of the password", dsn, quoted, s)
					}
				}
			}
			return
		}
		msg := err.Error()
		for _, s := range dsnSecrets(dsn) {
			if strings.Contains(msg, s) {
				t.Fatalf("openDB(%q): error %q shows %q of the password", dsn, msg, s)
			}
		}
	})
}

// TestPostgresPasswordWithAt: a password holding '@' is read whole (split at
// the last '@', as net/url does), so its tail is never taken for the host.
func TestPostgresPasswordWithAt(t *testing.T) {
	tests := []struct{ dsn, wantHost, wantPass string }{
		{"postgres://u:se@cret-pw@127.0.0.1:5433/db", "127.0.0.1", "se@cret-pw"},
		{"postgres://u:a@b@c@h/db?sslmode=disable", "h", "a@b@c"},
		{"postgres://u:p%40ss@h/db", "h", "p@ss"},
		{"postgresql://u:plain@h:1/db", "h", "plain"},
	}
	for _, tt := range tests {
		cfg, err := pgx.ParseConfig(postgresURL(tt.dsn))
		if err != nil {
			t.Fatalf("%q: %v", tt.dsn, err)
		}
		if cfg.Host != tt.wantHost || cfg.Password != tt.wantPass || cfg.User != "u" {
			t.Errorf("%q: host %q user %q password %q; want host %q password %q", tt.dsn, cfg.Host, cfg.User, cfg.Password, tt.wantHost, tt.wantPass)
		}
	}
}

// TestOpenKeepsPasswordOutOfErrors: Open on PostgreSQL DSNs whose passwords
// hold '@', '/', '%' or a space, against a port nothing listens on, fails
// without showing any piece of the password.
func TestOpenKeepsPasswordOutOfErrors(t *testing.T) {
	for _, dsn := range []string{
		"postgres://u:se@cret-pw@127.0.0.1:1/db?connect_timeout=2",
		"postgres://u:se@cret-pw@127.0.0.1:x/db",
		"postgres://u:se/cret-pw@127.0.0.1:1/db",
		"postgres://localhost:12/sekrit-pw@127.0.0.1:1/db?connect_timeout=2",
		"postgres://u:se%zzcret-pw@127.0.0.1:1/db",
		"postgres://u:se cret-pw@127.0.0.1:1/db",
		"postgres://u:sekrit-pw@127.0.0.1:1/db?sslmode=bogus",
		"postgres://127.0.0.1:1/db?password=sekrit-pw&sslmode=bogus",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := Open(ctx, dsn, nil)
		cancel()
		if err == nil {
			_ = s.Close()
			t.Fatalf("Open(%q) succeeded", dsn)
		}
		for _, secret := range []string{"sekrit-pw", "cret-pw", "se@cret", "se%zz"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("Open(%q): error %q shows %q", dsn, err, secret)
			}
		}
	}
}
