package faults_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// figures are what one scenario measured: the columns of docs/RELIABILITY.md's
// fault tables.
type figures struct {
	// Class names the fault or input class; Backend the store under test.
	Class, Backend string
	// Messages were published (or inputs built); Tried counts the deliveries or
	// calls made with them; Injected counts the faults injected.
	Messages, Tried, Injected int
	// Processed counts messages whose effect reached the sink exactly once (or
	// inputs answered as the contract says).
	Processed int
	// Duplicates counts effects beyond one per key at the sink; Losses counts
	// messages never acknowledged, or acknowledged without their effect. Both
	// must be 0.
	Duplicates, Losses int
	// Note is one line on what else was seen (outcomes, fenced-out holders).
	Note string
	// Run is the go test -run pattern that reproduces the scenario.
	Run string
}

var (
	reportMu sync.Mutex
	reported []figures
)

// report logs f for the test and keeps it for the run's table. It fails the test
// when duplicates or losses are not zero.
func report(t *testing.T, f figures) {
	t.Helper()
	f.Run = runPattern(t.Name())
	t.Logf("figures: class=%q backend=%s messages=%d tried=%d injected=%d processed=%d duplicates=%d losses=%d note=%q",
		f.Class, f.Backend, f.Messages, f.Tried, f.Injected, f.Processed, f.Duplicates, f.Losses, f.Note)
	if f.Duplicates != 0 || f.Losses != 0 {
		t.Errorf("%s on %s: %d duplicates and %d losses; both must be 0", f.Class, f.Backend, f.Duplicates, f.Losses)
	}
	reportMu.Lock()
	defer reportMu.Unlock()
	reported = append(reported, f)
}

// runPattern turns a test name into a -run pattern that selects only it.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// writeReport writes the figures of the run as a Markdown table to path.
func writeReport(path string) error {
	reportMu.Lock()
	rows := slices.Clone(reported)
	reportMu.Unlock()
	slices.SortStableFunc(rows, func(a, b figures) int { return strings.Compare(a.Run, b.Run) })
	var b strings.Builder
	fmt.Fprintf(&b, "| class | backend | messages | tried | injected | processed | duplicates | losses | note | reproduce |\n")
	fmt.Fprintf(&b, "|---|---|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, f := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %d | %s | `-run '%s'` |\n",
			f.Class, f.Backend, f.Messages, f.Tried, f.Injected, f.Processed, f.Duplicates, f.Losses,
			strings.ReplaceAll(f.Note, "|", "\\|"), f.Run)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
