//go:build !race

package faults_test

// raceEnabled reports whether the race detector is on, for the figures header.
const raceEnabled = false
