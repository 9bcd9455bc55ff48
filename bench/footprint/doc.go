// Package footprint measures memory per record: the memory backend's bytes per
// stored record, and the gate's terminal cache's bytes per cached key. Both
// are benchmarks reporting a bytes/record metric (the live heap after garbage
// collection, divided by the records held), so the normal test run skips them:
//
//	go test -run '^$' -bench . -benchtime 100000x -count 6 ./bench/footprint/ > footprint.txt
//	go tool benchstat footprint.txt
//
// The worker's resident memory over a long run (bounded by ttl and purge, not
// by the message count) is measured on a real process by bench/benchrun.
package footprint
