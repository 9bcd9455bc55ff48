package testenv

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// mysqlURLScheme prefixes the URL form of a MySQL DSN.
const mysqlURLScheme = "mysql://"

// parseMySQL reads a MySQL DSN in either form: go-sql-driver/mysql's
// "user:password@tcp(host:port)/db?param=value", or the URL
// "mysql://user:password@host:port/db?param=value" (port 3306 when absent; the query
// carries the driver's parameters).
func parseMySQL(dsn string) (*mysql.Config, error) {
	if !strings.HasPrefix(dsn, mysqlURLScheme) {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return nil, fmt.Errorf("parse MySQL DSN: %w", err)
		}
		return cfg, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse MySQL URL: %w", err)
	}
	if u.Fragment != "" || strings.Contains(strings.TrimPrefix(u.Path, "/"), "/") {
		return nil, errors.New("parse MySQL URL: want mysql://user:password@host:port/db?params")
	}
	cfg := mysql.NewConfig()
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
		if strings.Contains(cfg.User, ":") {
			return nil, errors.New("parse MySQL URL: a user name with ':' has no driver form")
		}
	}
	cfg.Net = "tcp"
	if u.Host != "" {
		cfg.Addr = u.Host
		if u.Port() == "" {
			cfg.Addr = net.JoinHostPort(u.Hostname(), "3306")
		}
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	// Let the driver's own parser read and validate the parameters.
	driverDSN := cfg.FormatDSN()
	if u.RawQuery != "" {
		driverDSN += "?" + u.RawQuery
	}
	parsed, err := mysql.ParseDSN(driverDSN)
	if err != nil {
		return nil, fmt.Errorf("parse MySQL URL: %w", err)
	}
	return parsed, nil
}

// MySQLDriverDSN rewrites a MySQL DSN in either form, go-sql-driver/mysql's or
// "mysql://user:password@host:port/db?param=value", into the driver's form, for
// a program such as bench/benchrun that takes a DSN from its user.
func MySQLDriverDSN(dsn string) (string, error) { return mysqlDriverDSN(dsn) }

// mysqlDriverDSN rewrites a DSN in either form (see parseMySQL) into the driver's form.
func mysqlDriverDSN(dsn string) (string, error) {
	cfg, err := parseMySQL(dsn)
	if err != nil {
		return "", err
	}
	return cfg.FormatDSN(), nil
}

// mysqlURL rewrites a DSN in either form into the URL form; only a TCP address has one.
func mysqlURL(dsn string) (string, error) {
	cfg, err := parseMySQL(dsn)
	if err != nil {
		return "", err
	}
	if cfg.Net != "tcp" {
		return "", fmt.Errorf("MySQL URL: only a tcp address has a URL form, not %s", cfg.Net)
	}
	u := url.URL{Scheme: "mysql", Host: cfg.Addr, Path: "/" + cfg.DBName}
	switch {
	case cfg.Passwd != "":
		u.User = url.UserPassword(cfg.User, cfg.Passwd)
	case cfg.User != "":
		u.User = url.User(cfg.User)
	}
	// The driver formats the parameters; with no user, address or database its DSN
	// is "/" followed by "?params" when there are any.
	params := cfg.Clone()
	params.User, params.Passwd, params.Net, params.Addr, params.DBName = "", "", "", "", ""
	u.RawQuery = strings.TrimPrefix(params.FormatDSN(), "/?")
	if u.RawQuery == "/" {
		u.RawQuery = ""
	}
	// Some addresses the driver takes (a host with a space) are no URL host.
	want := cfg.FormatDSN()
	if back, err := mysqlDriverDSN(u.String()); err != nil || back != want {
		return "", fmt.Errorf("MySQL URL: %s has no URL form", redact(want))
	}
	return u.String(), nil
}
