package testenv

import "testing"

func TestMySQLForms(t *testing.T) {
	tests := []struct {
		in, driver, url string
	}{
		{"root@tcp(127.0.0.1:3306)/test", "root@tcp(127.0.0.1:3306)/test", "mysql://root@127.0.0.1:3306/test"},
		{"mysql://root@127.0.0.1:3306/test", "root@tcp(127.0.0.1:3306)/test", "mysql://root@127.0.0.1:3306/test"},
		{"mysql://root@localhost/test", "root@tcp(localhost:3306)/test", "mysql://root@localhost:3306/test"},
		{"mysql://u:p%40ss@[::1]:3307/db?parseTime=true", "u:p@ss@tcp([::1]:3307)/db?parseTime=true", "mysql://u:p%40ss@[::1]:3307/db?parseTime=true"},
		{"u:p/w@tcp(h:1)/db?loc=Local&timeout=2s", "u:p/w@tcp(h:1)/db?loc=Local&timeout=2s", "mysql://u:p%2Fw@h:1/db?loc=Local&timeout=2s"},
		{"/test", "tcp(127.0.0.1:3306)/test", "mysql://127.0.0.1:3306/test"},
		{"mysql:///test", "tcp(127.0.0.1:3306)/test", "mysql://127.0.0.1:3306/test"},
	}
	for _, tt := range tests {
		driver, err := mysqlDriverDSN(tt.in)
		if err != nil || driver != tt.driver {
			t.Errorf("mysqlDriverDSN(%q) = %q, %v; want %q", tt.in, driver, err, tt.driver)
		}
		u, err := mysqlURL(tt.in)
		if err != nil || u != tt.url {
			t.Errorf("mysqlURL(%q) = %q, %v; want %q", tt.in, u, err, tt.url)
		}
	}
}

func TestMySQLFormsRejected(t *testing.T) {
	for _, in := range []string{
		"mysql://root@h/a/b",              // a path is no database name
		"mysql://root@h/test?timeout=bad", // the driver rejects the parameter
		"mysql://root@h/test#frag",
		"root@tcp(h:1)",    // no '/'
		"mysql://%zz@h/db", // bad escape
	} {
		if got, err := mysqlDriverDSN(in); err == nil {
			t.Errorf("mysqlDriverDSN(%q) = %q, want an error", in, got)
		}
	}
	for _, in := range []string{
		"root@unix(/run/mysqld.sock)/test", // a socket has no URL form
		"( )/",                             // nor a host with a space
	} {
		if got, err := mysqlURL(in); err == nil {
			t.Errorf("mysqlURL(%q) = %q, want an error", in, got)
		}
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://u:secret@h:5432/db?sslmode=disable", "postgres://u:xxxxx@h:5432/db?sslmode=disable"},
		{"postgres://postgres@h:5432/test", "postgres://postgres@h:5432/test"},
		{"host=h user=u password=secret dbname=d", "host=h user=u password=xxxxx dbname=d"},
		{"host=h password='a b' dbname=d", "host=h password=xxxxx dbname=d"},
		{"u:se@c/ret@tcp(h:3306)/db", "u:xxxxx@tcp(h:3306)/db"},
		{"root@tcp(h:3306)/test", "root@tcp(h:3306)/test"},
		{"127.0.0.1:6379", "127.0.0.1:6379"},
		{"mysql://u:secret@h/db", "mysql://u:xxxxx@h/db"},
	}
	for _, tt := range tests {
		if got := redact(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzMySQLForms checks that every DSN with a URL form reads back from it unchanged.
func FuzzMySQLForms(f *testing.F) {
	f.Add("root@tcp(127.0.0.1:3306)/test")
	f.Add("mysql://u:p%40ss@[::1]:3307/db?parseTime=true&loc=Local")
	f.Add("u:p/w@tcp(h:1)/db?timeout=2s&charset=utf8mb4")
	f.Add("mysql://root@localhost/")
	f.Fuzz(func(t *testing.T, in string) {
		driver, err := mysqlDriverDSN(in)
		if err != nil {
			return
		}
		u, err := mysqlURL(in)
		if err != nil {
			return // no URL form: not a tcp address
		}
		back, err := mysqlDriverDSN(u)
		if err != nil {
			t.Fatalf("%q: URL form %q does not parse: %v", in, u, err)
		}
		if back != driver {
			t.Fatalf("%q: driver form %q, but its URL form %q reads back as %q", in, driver, u, back)
		}
	})
}
