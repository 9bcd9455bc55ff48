package components

import (
	"strings"
	"testing"
	"time"
)

func TestAccountID(t *testing.T) {
	tests := []struct{ name, suffix, want string }{
		{"orders", "push", "orders-push"},
		{"Orders_EU", "run", "orders-eu-run"},
		{"x", "run", "og-x-run"},
		{"9lives", "push", "og-9lives-push"},
		{"a--b", "run", "a-b-run"},
		{"", "", "og-000"},
	}
	for _, tt := range tests {
		got := accountID(tt.name, tt.suffix)
		if got != tt.want {
			t.Errorf("accountID(%q, %q) = %q, want %q", tt.name, tt.suffix, got, tt.want)
		}
		if err := validAccountID("id", got); err != nil {
			t.Errorf("accountID(%q, %q) = %q: %v", tt.name, tt.suffix, got, err)
		}
	}
	long1 := accountID("payments-settlement-eu-west", "push")
	long2 := accountID("payments-settlement-eu-west", "run")
	if long1 == long2 || len(long1) > 30 || !strings.HasPrefix(long1, "payments-settlement-eu") {
		t.Errorf("long names: %q and %q", long1, long2)
	}
}

func TestValidAccountID(t *testing.T) {
	for id, ok := range map[string]bool{
		"orders-push": true, "abcdef": true, "abcde": false, "Orders-push": false, "1orders": false,
		"orders-": false, "orders_push": false, strings.Repeat("a", 30): true, strings.Repeat("a", 31): false,
	} {
		if err := validAccountID("f", id); (err == nil) != ok {
			t.Errorf("validAccountID(%q) = %v, want ok=%v", id, err, ok)
		}
	}
}

func TestGoogleDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		10 * time.Second: "10s", 600 * time.Second: "600s", 3500 * time.Millisecond: "3.5s",
		time.Nanosecond: "0.000000001s", 31 * 24 * time.Hour: "2678400s",
	} {
		if got := googleDuration(d); got != want {
			t.Errorf("googleDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
