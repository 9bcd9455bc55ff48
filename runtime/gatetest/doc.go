// Package gatetest is the contract suite every gate.Backend passes, in the spirit
// of gocloud.dev's drivertest. A backend's conformance_test.go supplies a
// HarnessMaker and calls RunConformanceTests; the suite covers every row of
// docs/design.md's transition table, races, zombies, fences, every method of
// gate.Backend, and gate.Admin's when the backend is one (else those tests are
// skipped with the reason, never a missing server).
package gatetest
