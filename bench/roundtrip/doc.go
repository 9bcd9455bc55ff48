// Package roundtrip counts what a request costs a store: calls on the gate's
// backend port (Backend), statements and transaction verbs sent through
// database/sql (Connector), commands sent by go-redis (Hook), and
// request–response exchanges on a network connection (Dial). The benchmark
// harness under bench/ uses these counters to report and test round trips per
// message as exact counts rather than times.
//
// Every counter is safe for concurrent use and only counts: it never changes
// what it wraps (arguments, results, errors and optional interfaces pass
// through), so a count taken through it is the count the unwrapped client makes.
package roundtrip
