package testenv

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// mysqlFlavor runs mariadbd in the foreground, listening on 127.0.0.1 and on a socket
// in its directory. Each commit's log is written at once but flushed to disk once a
// second: a commit survives a killed server but not a machine crash.
var mysqlFlavor = &flavor{
	kind:         "mysql",
	stopSignal:   syscall.SIGTERM,
	startTimeout: 60 * time.Second,
	command: func(s *Server) *exec.Cmd {
		args := append(mysqlCommonArgs(s),
			"--port="+strconv.Itoa(s.port),
			"--bind-address=127.0.0.1",
			"--socket="+filepath.Join(s.dir, "mysqld.sock"),
			"--pid-file="+filepath.Join(s.dir, "mysqld.pid"),
			"--tmpdir="+s.dir,
			"--skip-log-bin",
			"--max-connections=200",
			"--innodb-buffer-pool-size=64M",
			"--innodb-flush-log-at-trx-commit=2",
			"--innodb-doublewrite=0",
			"--performance-schema=OFF",
		)
		return exec.Command(s.cmd, args...)
	},
	ping: func(ctx context.Context, s *Server) error { return pingMySQL(ctx, "root@tcp("+s.Addr()+")/") },
	dsn:  func(s *Server) string { return "root@tcp(" + s.Addr() + ")/test" },
}

// mysqlKind resolves the MySQL server behind MySQL and MySQLURL.
var mysqlKind = &resolver{
	name:       "MySQL",
	envVar:     "ONCEGATE_TEST_MYSQL_DSN",
	defaultDSN: "root@tcp(127.0.0.1:3306)/test",
	normalize:  mysqlDriverDSN,
	ping:       pingMySQL,
	private:    newMySQLServer,
}

// MySQL returns a go-sql-driver/mysql DSN for a MySQL or MariaDB database for the test,
// such as "root@tcp(127.0.0.1:3306)/test": the one in ONCEGATE_TEST_MYSQL_DSN (in
// either the driver's form or the URL form "mysql://user:password@host:port/db?params",
// rewritten to the driver's form), else the default above if it answers SELECT 1, else
// a private MariaDB shared by the test binary. It skips or fails the test as Redis
// does. Tests share the database: name their tables with UniqueName, and never stop
// the server (use PrivateMySQL).
func MySQL(t testing.TB) string {
	t.Helper()
	return mysqlKind.get(t)
}

// MySQLURL returns the same database as MySQL in URL form, such as
// "mysql://root@127.0.0.1:3306/test", the form the project's ONCEGATE_SQL_DSN takes;
// the driver's parameters, if any, are its query. It fails the test if the DSN has no
// TCP address (a Unix socket has no URL form).
func MySQLURL(t testing.TB) string {
	t.Helper()
	u, err := mysqlURL(MySQL(t))
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return u
}

// PrivateMySQL starts a fresh MariaDB server that only this test uses, with a database
// test and a root user without a password, and stops it and removes its data when
// the test ends. Committed data survives Stop, Kill and Restart (not a machine
// crash). It skips or fails the test as Redis does when the server cannot be started.
func PrivateMySQL(t testing.TB) *Server {
	t.Helper()
	return privateServer(t, "MySQL", newMySQLServer)
}

// newMySQLServer installs the system tables with mariadb-install-db and starts mariadbd.
func newMySQLServer() (*Server, error) {
	binDirs := []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin", "/usr/local/mysql/bin"}
	server, err := lookBinary([]string{"mariadbd", "mysqld"}, binDirs...)
	if err != nil {
		return nil, err
	}
	install, err := lookBinary([]string{"mariadb-install-db", "mysql_install_db"}, binDirs...)
	if err != nil {
		return nil, err
	}
	prepare := func(s *Server) error {
		args := append(mysqlCommonArgs(s),
			"--auth-root-authentication-method=normal", // root@127.0.0.1 with no password
			"--skip-test-db",
		)
		cmd := exec.Command(install, args...)
		cmd.Dir = s.dir
		return runLogged(cmd, s.dir, "install-db")
	}
	setup := func(s *Server) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db, err := openMySQL("root@tcp(" + s.Addr() + ")/")
		if err != nil {
			return err
		}
		defer db.Close()
		if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS test"); err != nil {
			return fmt.Errorf("mysql setup: %w", err)
		}
		return nil
	}
	return launch(mysqlFlavor, server, nil, prepare, setup)
}

// mysqlCommonArgs are the options mariadb-install-db and mariadbd must agree on.
// --no-defaults keeps the machine's my.cnf out and must come first.
func mysqlCommonArgs(s *Server) []string {
	args := []string{
		"--no-defaults",
		"--datadir=" + filepath.Join(s.dir, "data"),
		"--innodb-log-file-size=8M",
		"--skip-name-resolve",
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root") // mariadbd refuses root without it
	}
	return args
}

// openMySQL opens a pool for a driver-form DSN with quiet logging and a 2s dial
// timeout when the DSN sets none.
func openMySQL(dsn string) (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse MySQL DSN: %w", err)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Second
	}
	cfg.Logger = quietLogger{}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysql connector: %w", err)
	}
	return sql.OpenDB(connector), nil
}

// pingMySQL connects to a driver-form DSN and runs SELECT 1.
func pingMySQL(ctx context.Context, dsn string) error {
	db, err := openMySQL(dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	var one int
	return db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// quietLogger drops the driver's log lines, which repeat the errors pings return.
type quietLogger struct{}

func (quietLogger) Print(...any) {}
