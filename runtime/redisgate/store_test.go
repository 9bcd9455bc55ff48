package redisgate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/redisgate"
)

func TestNewRejectsBadInput(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never contacted
	defer c.Close()
	tests := []struct {
		name   string
		client redis.UniversalClient
		prefix string
		want   string // substring of the error; "" means no error
	}{
		{"nil client", nil, "", "client is nil"},
		{"typed nil client", (*redis.Client)(nil), "", "client is nil"},
		{"empty prefix means default", c, "", ""},
		{"plain prefix", c, "orders:", ""},
		{"non-ASCII prefix", c, "commandes-é:", ""},
		{"glob characters are escaped, not refused", c, "a*b?[c]:", ""},
		{"space", c, "my app:", "white space"},
		{"tab", c, "app\t:", "white space"},
		{"newline", c, "app:\n", "white space"},
		{"control character", c, "app\x00:", "printable"},
		{"open brace", c, "{app}:", "braces"},
		{"close brace", c, "app}:", "braces"},
		{"invalid UTF-8", c, "app\xff:", "UTF-8"},
		{"too long", c, strings.Repeat("p", 257), "at most 256 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := redisgate.New(tt.client, &redisgate.Options{Prefix: tt.prefix})
			if tt.want == "" {
				if err != nil || s == nil {
					t.Fatalf("New = %v, %v; want a store", s, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New error = %v, want one containing %q", err, tt.want)
			}
			if s != nil {
				t.Fatalf("New returned a store with an error")
			}
		})
	}
}

func TestNewDefaults(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	for _, opts := range []*redisgate.Options{nil, {}} {
		s, err := redisgate.New(c, opts)
		if err != nil {
			t.Fatalf("New(%v): %v", opts, err)
		}
		if s.Prefix() != redisgate.DefaultPrefix || s.RedisKey("k") != "oncegate:k" {
			t.Fatalf("prefix %q, key %q; want the default", s.Prefix(), s.RedisKey("k"))
		}
	}
}

// TestKeysAreStoredByteForByte checks the key layout: prefix + key, never hashed,
// for a 10 KB key, non-ASCII keys and keys holding braces or glob characters.
func TestKeysAreStoredByteForByte(t *testing.T) {
	s, c := newStore(t)
	ctx := context.Background()
	keys := []string{
		strings.Repeat("k", 10*1024),
		"注文:四二", "commande:e\u0301", "🧾", "bin\x00\xff",
		"{tag}x", "a*b?[c]",
	}
	for _, k := range keys {
		mustClaim(t, s, k, time.Minute, gate.Won)
		n, err := c.Exists(ctx, s.Prefix()+k).Result()
		if err != nil || n != 1 {
			t.Fatalf("EXISTS prefix+%.40q = %d, %v; want 1", k, n, err)
		}
	}
	if got := len(scanKeys(t, c, globEscape(s.Prefix())+"*")); got != len(keys) {
		t.Fatalf("%d keys under the prefix, want %d (one per record)", got, len(keys))
	}
}
