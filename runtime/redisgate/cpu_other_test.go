//go:build !unix

package redisgate_test

import (
	"testing"
	"time"
)

// clientCPU skips the benchmark: getrusage is Unix-only.
func clientCPU(b *testing.B) time.Duration {
	b.Skip("client CPU time (getrusage) is measured on Linux and macOS only")
	return 0
}
