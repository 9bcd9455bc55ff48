//go:build !race

package e2e_test

// raceEnabled reports whether the race detector is on, for the figures header.
const raceEnabled = false
