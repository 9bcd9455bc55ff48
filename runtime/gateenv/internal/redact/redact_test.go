package redact

import "testing"

// TestDSN pins what an error quotes of a DSN or address: the hosts after
// the last '@', the user name where only one reading has it, nothing of a
// password holding ',', '@', ':' or '/'.
func TestDSN(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"redis://u:S3cr,XYZ@127.0.0.1:6379", "redis://u:xxxxx@127.0.0.1:6379"},
		{"127.0.0.1:6379,u:S3cr,XYZ@h:1", "xxxxx@h:1"},
		{"u:S3cr@h:1", "u:xxxxx@h:1"},
		{"S3cr@h:1", "xxxxx@h:1"},
		{"u:a@b:c@h:1", "u:xxxxx@h:1"},
		{"a@b:c@h:1", "xxxxx@h:1"},
		{"h1:1,h2:2", "h1:1,h2:2"},
		{"postgres://u:se@cr,et@h1:1,h2:2/db", "postgres://u:xxxxx@h1:1,h2:2/db"},
		{"postgres://h/db?password=S3cr&sslmode=disable", "postgres://h/db?password=xxxxx&sslmode=disable"},
		{"h1:1,u:abc://S3cr@h2:2", "xxxxx@h2:2"},
	} {
		if got := DSN(tt.in); got != tt.want {
			t.Errorf("DSN(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
