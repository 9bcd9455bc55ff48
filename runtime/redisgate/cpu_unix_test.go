//go:build unix

package redisgate_test

import (
	"syscall"
	"testing"
	"time"
)

// clientCPU returns the CPU time this process has used (user + system).
func clientCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
