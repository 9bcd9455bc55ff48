package testenv

import (
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"net"
	"strings"
	"testing"
)

// Bounds of UniqueName's parts, in bytes.
const (
	namePrefixMax = 12
	nameTestMax   = 24
	nameRandLen   = 10 // base-32 characters: 50 random bits
)

var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// UniqueName returns a name no other call returns (50 random bits), for a test's own
// table, schema, key prefix or namespace on a shared server: the prefix and the end of
// the test's name, lower-cased, with every run of other characters than a–z and 0–9
// turned into one '_', then '_' and the random part. It starts with a letter (the
// prefix gets a "t" in front otherwise, and is "t" when empty) and is at most 48 bytes, so it is a valid unquoted
// identifier in PostgreSQL (63-byte limit), MySQL (64) and SQLite, with room for
// suffixes such as "_pkey".
func UniqueName(t testing.TB, prefix string) string {
	t.Helper()
	b := make([]byte, 7)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("testenv: unique name: %v", err)
	}
	return uniqueName(prefix, t.Name(), lowerBase32.EncodeToString(b)[:nameRandLen])
}

// uniqueName builds UniqueName's result from its parts.
func uniqueName(prefix, testName, random string) string {
	p := identPart(prefix)
	if p == "" || p[0] < 'a' || p[0] > 'z' {
		p = "t" + p
	}
	if len(p) > namePrefixMax {
		p = strings.TrimRight(p[:namePrefixMax], "_")
	}
	name := p
	if n := identPart(testName); n != "" {
		if len(n) > nameTestMax {
			n = strings.TrimLeft(n[len(n)-nameTestMax:], "_")
		}
		name += "_" + n
	}
	return name + "_" + random
}

// identPart lower-cases s and turns each run of characters outside [a-z0-9] into one
// '_', trimming '_' at both ends.
func identPart(s string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			under = false
			continue
		}
		if !under {
			b.WriteByte('_')
			under = true
		}
	}
	return strings.Trim(b.String(), "_")
}

// FreePort returns a TCP port on 127.0.0.1 that was free when it was chosen, for a
// server the test starts itself (another process may take it before then). It fails
// the test if no port can be had.
func FreePort(t testing.TB) int {
	t.Helper()
	p, err := freePort()
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return p
}

// freePort asks the kernel for a free port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
