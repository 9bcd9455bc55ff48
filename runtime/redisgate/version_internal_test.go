package redisgate

import "testing"

// TestVersionAtLeast: the record format's floor, Redis 7.0, read from
// redis_version values real servers report.
func TestVersionAtLeast(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{
		{"7.0.0", true},
		{"7.0.15", true},
		{"7.2.4", true}, // Valkey reports this
		{"8.0.2", true},
		{"10.0", true},
		{"6.2.14", false},
		{"5.0.7", false},
		{"6", false},
		{"", false},
		{"x.y", false},
	}
	for _, tt := range tests {
		if got := versionAtLeast(tt.v, 7, 0); got != tt.want {
			t.Errorf("versionAtLeast(%q, 7, 0) = %v, want %v", tt.v, got, tt.want)
		}
	}
	info := "# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\n"
	if got := infoField(info, "redis_version"); got != "7.0.15" {
		t.Errorf("infoField = %q", got)
	}
}
