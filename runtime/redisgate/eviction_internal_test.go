package redisgate

import (
	"strconv"
	"strings"
	"testing"
)

func TestParseMemoryInfo(t *testing.T) {
	tests := []struct {
		info      string
		policy    string
		maxMemory int64
	}{
		{"# Memory\r\nused_memory:1\r\nmaxmemory:0\r\nmaxmemory_human:0B\r\nmaxmemory_policy:noeviction\r\n", "noeviction", 0},
		{"maxmemory:104857600\r\nmaxmemory_policy:volatile-lru\r\n", "volatile-lru", 100 << 20},
		{"maxmemory_policy:allkeys-lfu\n", "allkeys-lfu", -1}, // no maxmemory: cannot be judged
		{"maxmemory:-5\r\nmaxmemory:x\r\n", "", -1},
		{"", "", -1},
	}
	for _, tt := range tests {
		p, m := parseMemoryInfo(tt.info)
		if p != tt.policy || m != tt.maxMemory {
			t.Errorf("parseMemoryInfo(%q) = %q, %d; want %q, %d", tt.info, p, m, tt.policy, tt.maxMemory)
		}
	}
}

// FuzzParseMemoryInfo: any reply parses without panicking, and a maxmemory it
// reports is the value of one of the reply's maxmemory lines.
func FuzzParseMemoryInfo(f *testing.F) {
	f.Add("maxmemory:104857600\r\nmaxmemory_policy:volatile-lru\r\n")
	f.Add("maxmemory:\r\nmaxmemory_policy\r\n:::\n")
	f.Fuzz(func(t *testing.T, info string) {
		_, m := parseMemoryInfo(info)
		if m < -1 {
			t.Fatalf("maxmemory %d", m)
		}
		if m < 0 {
			return
		}
		for _, line := range strings.Split(info, "\n") {
			v, ok := strings.CutPrefix(strings.TrimSpace(line), "maxmemory:")
			if n, err := strconv.ParseInt(v, 10, 64); ok && err == nil && n == m {
				return
			}
		}
		t.Fatalf("maxmemory %d is in no line of %q", m, info)
	})
}
