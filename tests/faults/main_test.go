package faults_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/internal/testenv"
)

// Environment variables of this suite (see doc.go).
const (
	envScale  = "ONCEGATE_CHAOS_SCALE"
	envReport = "ONCEGATE_FAULTS_REPORT"
	// envZombie makes the test binary run as the zombie worker instead of the
	// tests (see zombie_test.go), so a holder can be frozen with SIGSTOP.
	envZombie = "ONCEGATE_FAULTS_ZOMBIE_WORKER"
)

func TestMain(m *testing.M) {
	if os.Getenv(envZombie) == "1" {
		if err := zombieMain(os.Getenv); err != nil {
			fmt.Fprintln(os.Stderr, "zombie worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	redis.SetLogger(quietRedis{}) // its pool logs every failed dial of an outage
	testenv.Main(m)
	if path := os.Getenv(envReport); path != "" {
		if err := writeReport(path); err != nil {
			fmt.Fprintln(os.Stderr, "faults: write report:", err)
			os.Exit(1)
		}
	}
}

// scaled returns n for a normal run, n/4 (at least 1) under -short, and n times
// ONCEGATE_CHAOS_SCALE when it is set.
func scaled(t testing.TB, n int) int {
	t.Helper()
	if v := os.Getenv(envScale); v != "" {
		k, err := strconv.Atoi(v)
		if err != nil || k < 1 {
			t.Fatalf("%s=%q: want a positive integer", envScale, v)
		}
		return n * k
	}
	if testing.Short() {
		return max(1, n/4)
	}
	return n
}

// quietRedis drops go-redis's internal log lines.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}
