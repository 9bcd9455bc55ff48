// Package pullstorm is the crash storm for pull subscribers: real pull worker
// processes (this test binary re-executed as internal/worker.PullMain) receive
// by streaming pull from a subscription on Google's Pub/Sub emulator
// (testenv.PubSubEmulator), forward each order to a recording supplier through
// runtime/pull, and are SIGKILLed and restarted while they work. Every run is
// judged by internal/crashwindow over the calls the supplier accepted (a call it
// refused or whose caller gave up committed nothing): every order reaches the
// supplier (0 lost) and every accepted call beyond one per key was cut by a
// kill between the call and the done record (0 unexplained repeats). A repeat
// after an unrecorded effect (an accepted call whose delivery then logged
// body-failed, its answer lost to the work deadline, or not-recorded) is
// reported apart, as the ack table's gap (crashwindow.Accounting.AfterUnrecorded).
//
// Backends: Redis and PostgreSQL (internal/testenv), SQLite, and Datastore on
// Google's Datastore emulator (testenv.DatastoreEmulator). ONCEGATE_PULL_STORM_ORDERS and
// ONCEGATE_PULL_STORM_KILLS scale a run (defaults 60 and 6, sized for CI);
// ONCEGATE_PULL_STORM_PLAN=tight runs the tighter plan (3 s lease, 1 s store
// timeout) instead of the default one.
package pullstorm
