package redisgate

import "testing"

// TestInfoField reads redis_version from INFO server (internal/dotted compares
// it with the record format's floor).
func TestInfoField(t *testing.T) {
	info := "# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\n"
	if got := infoField(info, "redis_version"); got != "7.0.15" {
		t.Errorf("infoField = %q", got)
	}
}
