package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	_ "github.com/go-sql-driver/mysql" // driver "mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"
	"github.com/redis/go-redis/v9"
)

// Machine describes where the figures were taken.
type Machine struct {
	CPU       string
	Cores     int
	MemoryGiB float64
	Kernel    string
	Go        string
	Redis     string
	Postgres  string
	MySQL     string
	LoadStart string
	LoadEnd   string
}

func readMachine(ctx context.Context, srv servers) Machine {
	m := Machine{Cores: runtime.NumCPU(), LoadStart: loadAverage(), Go: goVersion(ctx)}
	m.CPU = procField("/proc/cpuinfo", "model name")
	if kb := procField("/proc/meminfo", "MemTotal"); kb != "" {
		var n float64
		if _, err := fmt.Sscanf(kb, "%f", &n); err == nil {
			m.MemoryGiB = n / (1 << 20)
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(b))
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c := redis.NewClient(&redis.Options{Addr: srv.Redis, DisableIdentity: true})
	if info, err := c.Info(ctx, "server").Result(); err == nil {
		m.Redis = "Redis " + infoField(info, "redis_version")
	}
	_ = c.Close()
	m.Postgres = sqlVersion(ctx, "pgx", srv.Postgres, "SHOW server_version", "PostgreSQL ")
	m.MySQL = sqlVersion(ctx, "mysql", srv.MySQL, "SELECT VERSION()", "")
	return m
}

func goVersion(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output()
	if err != nil {
		return runtime.Version()
	}
	return strings.TrimSpace(string(out))
}

func sqlVersion(ctx context.Context, driver, dsn, query, prefix string) string {
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return ""
	}
	defer db.Close()
	var v string
	if err := db.QueryRowContext(ctx, query).Scan(&v); err != nil {
		return ""
	}
	return prefix + v
}

// procField returns the value of the first "name: value" line of a /proc file.
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}

// loadAverage returns the 1, 5 and 15 minute load averages (/proc/loadavg).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
