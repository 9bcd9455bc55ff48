package sqlgate

import (
	"net/url"
	"strings"
	"testing"
)

func TestMySQLConfig(t *testing.T) {
	tests := []struct {
		dsn                  string
		user, pass, addr, db string
		interpolate          bool
		param, paramValue    string
	}{
		{dsn: "mysql://root@127.0.0.1:3306/test", user: "root", addr: "127.0.0.1:3306", db: "test", interpolate: true},
		{dsn: "mysql://app:s3cr%40t%2Fx@db.internal/orders", user: "app", pass: "s3cr@t/x", addr: "db.internal:3306", db: "orders", interpolate: true},
		{dsn: "mysql://u:p@[::1]:3307/d?interpolateParams=false", user: "u", pass: "p", addr: "[::1]:3307", db: "d"},
		{dsn: "mysql://u@h/d?time_zone=%27%2B09%3A00%27", user: "u", addr: "h:3306", db: "d", interpolate: true, param: "time_zone", paramValue: "'+09:00'"},
		{dsn: "mysql://u@h:3306/", user: "u", addr: "h:3306", interpolate: true},
	}
	for _, tt := range tests {
		cfg, err := mysqlConfig(tt.dsn)
		if err != nil {
			t.Errorf("mysqlConfig(%q): %v", tt.dsn, err)
			continue
		}
		if cfg.User != tt.user || cfg.Passwd != tt.pass || cfg.Addr != tt.addr || cfg.DBName != tt.db ||
			cfg.Net != "tcp" || cfg.InterpolateParams != tt.interpolate {
			t.Errorf("mysqlConfig(%q) = user %q pass %q addr %q db %q net %q interpolate %v", tt.dsn,
				cfg.User, cfg.Passwd, cfg.Addr, cfg.DBName, cfg.Net, cfg.InterpolateParams)
		}
		if tt.param != "" && cfg.Params[tt.param] != tt.paramValue {
			t.Errorf("mysqlConfig(%q): param %s = %q, want %q", tt.dsn, tt.param, cfg.Params[tt.param], tt.paramValue)
		}
	}
	for _, dsn := range []string{"mysql://", "mysql:///db", "mysql://h/a/b", "mysql://h/d?readTimeout=x", "mysql://h:bad/d"} {
		if _, err := mysqlConfig(dsn); err == nil {
			t.Errorf("mysqlConfig(%q) accepted", dsn)
		}
	}
	// A password never shows in a parse error, nor becomes the database name
	// (a '/' in it not percent-encoded ends the authority early).
	for _, dsn := range []string{"mysql://u:hunter2@h:99999999999/d\x7f", "mysql://u:12/hunter2@h", "mysql://u:12?hunter2@h/d"} {
		if cfg, err := mysqlConfig(dsn); err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("mysqlConfig(%q) = %+v, %v; want an error without the password", dsn, cfg, err)
		}
	}
}

func TestSQLiteName(t *testing.T) {
	tests := []struct {
		rest, path string
		want       map[string]string
	}{
		{rest: "/tmp/x.db", path: "/tmp/x.db", want: map[string]string{"_busy_timeout": "10000", "_journal_mode": "WAL"}},
		{rest: "x.db", path: "x.db", want: map[string]string{"_busy_timeout": "10000", "_journal_mode": "WAL"}},
		{rest: "///var/lib/og.db", path: "/var/lib/og.db", want: map[string]string{"_journal_mode": "WAL"}},
		{rest: "/x.db?_busy_timeout=50", path: "/x.db", want: map[string]string{"_busy_timeout": "50", "_journal_mode": "WAL"}},
		{rest: "/x.db?_pragma=journal_mode(DELETE)", path: "/x.db", want: map[string]string{"_busy_timeout": "10000", "_journal_mode": ""}},
		{rest: "/x.db?_synchronous=NORMAL", path: "/x.db", want: map[string]string{"_synchronous": "NORMAL"}},
	}
	for _, tt := range tests {
		got, err := sqliteName(tt.rest)
		if err != nil {
			t.Errorf("sqliteName(%q): %v", tt.rest, err)
			continue
		}
		path, query, _ := strings.Cut(got, "?")
		q, _ := url.ParseQuery(query)
		if path != tt.path {
			t.Errorf("sqliteName(%q) path = %q, want %q", tt.rest, path, tt.path)
		}
		for k, v := range tt.want {
			if q.Get(k) != v {
				t.Errorf("sqliteName(%q): %s = %q, want %q (in %q)", tt.rest, k, q.Get(k), v, got)
			}
		}
	}
}

func TestPlaceholders(t *testing.T) {
	tmpl := "UPDATE {T} SET a = $3, b = $1 + $3 WHERE {K} = $2 AND c < {MAX}"
	tests := []struct {
		d     Dialect
		text  string
		order []int
	}{
		{Postgres, `UPDATE "t" SET a = $3, b = $1 + $3 WHERE "key" = $2 AND c < 9007199254740991`, nil},
		{SQLite, `UPDATE "t" SET a = ?3, b = ?1 + ?3 WHERE "key" = ?2 AND c < 9007199254740991`, nil},
		{MySQL, "UPDATE `t` SET a = ?, b = ? + ? WHERE `key` = ? AND c < 9007199254740991", []int{3, 1, 3, 2}},
	}
	for _, tt := range tests {
		st := tt.d.render(tmpl, "t")
		if st.text != tt.text {
			t.Errorf("%s: %s\nwant %s", tt.d, st.text, tt.text)
		}
		if got := st.args("one", "two", "three"); tt.d == MySQL && strings.Join(toStrings(got), ",") != "three,one,three,two" {
			t.Errorf("%s args = %v", tt.d, got)
		}
	}
}

func toStrings(a []any) []string {
	out := make([]string, len(a))
	for i, v := range a {
		out[i] = v.(string)
	}
	return out
}

func TestIndexNameFits(t *testing.T) {
	long := strings.Repeat("t", 63)
	a, b := indexName(long, "expires_at"), indexName(long[:62]+"u", "expires_at")
	if len(a) > 63 || len(b) > 63 || a == b {
		t.Fatalf("indexName = %q (%d), %q (%d): want distinct names of at most 63 bytes", a, len(a), b, len(b))
	}
	if got := indexName("og", "unknown"); got != "og_unknown" {
		t.Fatalf("indexName(og) = %q", got)
	}
	if err := checkIdent(a); err != nil {
		t.Fatalf("indexName %q is not an identifier: %v", a, err)
	}
}

func FuzzCheckIdent(f *testing.F) {
	for _, s := range []string{"oncegate_records", "x; DROP TABLE y", "1a", "", "a\"b", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if checkIdent(name) != nil {
			return
		}
		if len(name) == 0 || len(name) > 63 || name[0] >= '0' && name[0] <= '9' {
			t.Fatalf("accepted %q", name)
		}
		for _, c := range []byte(name) {
			if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				t.Fatalf("accepted %q with byte %q", name, c)
			}
		}
	})
}

func FuzzOpenDSN(f *testing.F) {
	for _, s := range []string{"postgres://u@h/d", "mysql://u:p@h:1/d?x=y", "sqlite:/tmp/x.db?_pragma=a", "mysql://%zz", "sqlite:", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		db, d, err := openDB(dsn) // opens no connection
		if err != nil {
			return
		}
		defer db.Close()
		if !d.valid() {
			t.Fatalf("openDB(%q) accepted with dialect %d", dsn, d)
		}
	})
}

func FuzzMySQLConfigKeepsPasswordOutOfErrors(f *testing.F) {
	for _, s := range []string{"mysql://u:hunter2@h:3306/d", "mysql://u:hunter2@h:x/d", "mysql://u:hunter2@h/d?timeout=q", "mysql://u:hunter2@h/a/b", "mysql://u:hunter2@[::1/d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		cfg, err := mysqlConfig(dsn)
		if err == nil {
			if cfg.Net != "tcp" || cfg.Addr == "" {
				t.Fatalf("mysqlConfig(%q) = net %q addr %q", dsn, cfg.Net, cfg.Addr)
			}
			return
		}
		at := strings.LastIndex(dsn, "@")
		colon := strings.Index(dsn, "://")
		if at < 0 || colon < 0 || at < colon {
			return
		}
		_, pass, ok := strings.Cut(dsn[colon+3:at], ":")
		if ok && len(pass) >= 6 && strings.Contains(err.Error(), pass) {
			t.Fatalf("mysqlConfig(%q): error %q shows the password", dsn, err)
		}
	})
}
