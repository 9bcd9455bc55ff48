// Package pullstorm is the crash storm for pull subscribers: real pull worker
// processes (this test binary re-executed as internal/worker.PullMain) receive
// by streaming pull from a subscription on Google's Pub/Sub emulator
// (testenv.PubSubEmulator), forward each order to a recording supplier through
// runtime/pull, and are SIGKILLed and restarted while they work. Every run is judged by internal/crashwindow: every order reaches the
// supplier (0 lost) and every call beyond one per key was cut by a kill
// between the call and the done record (0 unexplained repeats).
//
// Backends: Redis and PostgreSQL (internal/testenv), SQLite, and Datastore on
// Google's Datastore emulator (testenv.DatastoreEmulator). ONCEGATE_PULL_STORM_ORDERS and
// ONCEGATE_PULL_STORM_KILLS scale a run (defaults 60 and 6, sized for CI).
package pullstorm
