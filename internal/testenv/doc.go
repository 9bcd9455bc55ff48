// Package testenv gives tests real Redis, PostgreSQL and MySQL/MariaDB servers.
//
// Each of [Redis], [Postgres] and [MySQL] finds a server in this order:
//
//  1. the environment variable ONCEGATE_TEST_REDIS_ADDR, ONCEGATE_TEST_POSTGRES_DSN or
//     ONCEGATE_TEST_MYSQL_DSN, used as given (a set variable that does not answer fails
//     the test, whatever CI says: an explicit choice is never silently replaced);
//  2. the standard local server (127.0.0.1:6379, :5432 as postgres in database test,
//     :3306 as root in database test), if it answers a real protocol-level ping;
//  3. a private server started from the installed binaries (redis-server; initdb and
//     postgres; mariadb-install-db and mariadbd) in a temporary directory on a free
//     loopback port. One private server per kind is shared by the whole test binary.
//
// When none works, the test is skipped with the reasons, unless CI is true
// (CI=true in the environment): then a missing server fails the test. Setting
// ONCEGATE_TEST_FORCE_PRIVATE=1 skips steps 1 and 2, so every test binary runs
// against its own private servers.
//
// Tests that stop, restart, pause or crash a server must not do it to a shared one:
// [PrivateRedis], [PrivatePostgres] and [PrivateMySQL] always start a fresh server
// the test controls through [Server].
//
// A package whose tests use the shared servers should stop them when its test binary
// ends:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
// Without it the servers still die with the test binary (they get SIGKILL when it
// exits, through Linux's parent-death signal), and their directories are removed by
// the next test binary that starts a private server.
//
// When the test process runs as root, PostgreSQL runs as the postgres user (or nobody
// when there is none), since it refuses to run as root; MariaDB runs with --user=root.
package testenv
