package dotted

import "testing"

func TestAtLeast(t *testing.T) {
	for _, tt := range []struct {
		v            string
		major, minor int
		want         bool
	}{
		{"7.0.0", 7, 0, true},
		{"7.0.15", 7, 0, true},
		{"7.2.4", 7, 0, true}, // Valkey reports this
		{"8.0.2", 7, 0, true},
		{"10.0", 7, 0, true},
		{"6.2.14", 7, 0, false},
		{"5.0.7", 7, 0, false},
		{"6", 7, 0, false},
		{"", 7, 0, false},
		{"x.y", 7, 0, false},
		{"10.11.19-MariaDB-0+deb12u1", 10, 5, true},
		{"10.5-MariaDB", 10, 5, true},
		{"10.4.32-MariaDB", 10, 5, false},
		{"11.4.2-MariaDB", 10, 5, true},
	} {
		if got := AtLeast(tt.v, tt.major, tt.minor); got != tt.want {
			t.Errorf("AtLeast(%q, %d, %d) = %v, want %v", tt.v, tt.major, tt.minor, got, tt.want)
		}
	}
}
