package testenv

import (
	"regexp"
	"strings"
	"testing"
)

var validIdent = regexp.MustCompile(`^[a-z][a-z0-9_]{0,47}$`)

func TestUniqueNameParts(t *testing.T) {
	tests := []struct {
		prefix, test, want string
	}{
		{"gate", "TestClaim", "gate_testclaim_r"},
		{"", "TestClaim", "t_testclaim_r"},
		{"9lives", "TestX", "t9lives_testx_r"},
		{"Gate-Records!", "TestConformance/Claim/lease lapsed", "gate_records_mance_claim_lease_lapsed_r"},
		{"___", "", "t_r"},
		{"a_very_long_prefix_indeed", "T", "a_very_long_t_r"},
		{"p", "TestVeryLongName/with/many/levels/of_subtests", "p_many_levels_of_subtests_r"},
		{"é表", "Ünïcode", "t_n_code_r"},
	}
	for _, tt := range tests {
		got := uniqueName(tt.prefix, tt.test, "r")
		if got != tt.want {
			t.Errorf("uniqueName(%q, %q) = %q, want %q", tt.prefix, tt.test, got, tt.want)
		}
	}
}

func TestUniqueName(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		n := UniqueName(t, "Gate Records")
		if !validIdent.MatchString(n) {
			t.Fatalf("UniqueName = %q, not a valid identifier of at most 48 bytes", n)
		}
		if !strings.HasPrefix(n, "gate_records_testuniquename_") {
			t.Fatalf("UniqueName = %q, want prefix and test name first", n)
		}
		if seen[n] {
			t.Fatalf("UniqueName returned %q twice", n)
		}
		seen[n] = true
	}
}

// TestUniqueNameIsATableName creates a table named by UniqueName, unquoted, in the
// shared PostgreSQL and MySQL databases.
func TestUniqueNameIsATableName(t *testing.T) {
	t.Run("PostgreSQL", func(t *testing.T) {
		dsn, name := Postgres(t), UniqueName(t, "tbl")
		execPG(t, dsn, "CREATE TABLE "+name+" (id int)", "DROP TABLE "+name)
	})
	t.Run("MySQL", func(t *testing.T) {
		dsn, name := MySQL(t), UniqueName(t, "tbl")
		execMySQL(t, dsn, "CREATE TABLE "+name+" (id int)", "DROP TABLE "+name)
	})
}

func FuzzUniqueName(f *testing.F) {
	f.Add("gate", "TestClaim/sub test")
	f.Add("", "")
	f.Add("0", "\xff\x00/_")
	f.Fuzz(func(t *testing.T, prefix, test string) {
		n := uniqueName(prefix, test, "abcdefghij")
		if !validIdent.MatchString(n) {
			t.Fatalf("uniqueName(%q, %q) = %q, not a valid identifier of at most 48 bytes", prefix, test, n)
		}
		if !strings.HasSuffix(n, "_abcdefghij") {
			t.Fatalf("uniqueName(%q, %q) = %q lost its random part", prefix, test, n)
		}
	})
}
