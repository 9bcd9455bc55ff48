// Package testenv gives tests real Redis, PostgreSQL and MySQL/MariaDB servers, and
// Google's Pub/Sub, Datastore and Firestore (Datastore mode) emulators.
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
// [PubSubEmulator], [DatastoreEmulator], [DatastoreEmulatorFirestoreMode] and
// [FirestoreDatastoreModeEmulator] return the host:port of an emulator (the value for
// PUBSUB_EMULATOR_HOST or DATASTORE_EMULATOR_HOST): the one
// ONCEGATE_TEST_PUBSUB_EMULATOR_HOST, ONCEGATE_TEST_DATASTORE_EMULATOR_HOST,
// ONCEGATE_TEST_DATASTORE_FIRESTORE_MODE_EMULATOR_HOST or
// ONCEGATE_TEST_FIRESTORE_EMULATOR_HOST names
// (it must answer the health check, GET /, or the test fails), else one started by
// internal/emulator as a Java process on a free loopback port, shared by the whole
// test binary (ONCEGATE_TEST_FORCE_PRIVATE=1 ignores the variables). Its log is kept
// in a testenv directory until Main stops it, and a failing test prints what the
// emulator logged during it. An emulator that is not installed skips the test with
// one line naming the Debian package (google-cloud-cli-pubsub-emulator,
// google-cloud-cli-datastore-emulator, google-cloud-cli-firestore-emulator, or
// openjdk-17-jre-headless for Java), or fails it under CI=true; an installed
// emulator that does not start fails the test whatever CI says. Each JVM takes a few
// seconds to start, which is why one is shared per binary: tests isolate their data
// (namespaces, UniqueName topics) instead of restarting it.
//
// A package whose tests use the shared servers or emulators should stop them when its test binary
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
