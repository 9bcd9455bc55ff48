// Package gatetest is the contract suite every gate.Backend passes, in the spirit
// of gocloud.dev's drivertest. A backend's conformance_test.go supplies a
// HarnessMaker and calls RunConformanceTests; the suite covers every row of
// docs/design.md's transition table, races, zombies, fences and each optional
// capability the backend implements (a capability it lacks is skipped with the
// reason, never a missing server).
package gatetest
