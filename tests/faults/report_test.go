package faults_test

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
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
	// Duplicates counts effects beyond one per key at the sink that nothing
	// explains; Losses counts messages never acknowledged, or acknowledged
	// without their effect. Both must be 0.
	Duplicates, Losses int
	// Repeats counts effects beyond one per key at the sink after a delivery of
	// the key ran its body without recording the outcome: not-recorded (neither
	// the done record nor the unknown mark could be written: docs/design.md's
	// "best-effort unknown"), or body-failed (the supplier committed while its
	// answer was lost to the work deadline). A redelivery after the lease then
	// ran the body again; the supplier's Idempotency-Key is what absorbs these.
	Repeats int
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
	t.Logf("figures: class=%q backend=%s messages=%d tried=%d injected=%d processed=%d duplicates=%d losses=%d repeats=%d note=%q",
		f.Class, f.Backend, f.Messages, f.Tried, f.Injected, f.Processed, f.Duplicates, f.Losses, f.Repeats, f.Note)
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

// Markers around the figures in docs/RELIABILITY.md.
const (
	beginMarker = "<!-- faults:begin -->"
	endMarker   = "<!-- faults:end -->"
)

// writeReport writes the figures of the run as a Markdown table to path: between
// the faults markers when the file has them (docs/RELIABILITY.md), else as the
// whole file.
func writeReport(path string) error {
	table := reportTable()
	old, err := os.ReadFile(path)
	if err == nil {
		b, e := bytes.Index(old, []byte(beginMarker)), bytes.Index(old, []byte(endMarker))
		if b >= 0 && e > b {
			var out bytes.Buffer
			out.Write(old[:b+len(beginMarker)])
			out.WriteString("\n\n" + table + "\n")
			out.Write(old[e:])
			return os.WriteFile(path, out.Bytes(), 0o644)
		}
	}
	return os.WriteFile(path, []byte(table), 0o644)
}

// reportTable renders the figures of the run, sorted by test, under a line
// naming the run's conditions.
func reportTable() string {
	reportMu.Lock()
	rows := slices.Clone(reported)
	reportMu.Unlock()
	slices.SortStableFunc(rows, func(a, b figures) int { return strings.Compare(a.Run, b.Run) })
	scale := os.Getenv(envScale)
	if scale == "" {
		scale = "1"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Run %s on %s/%s, %d CPUs, race detector %s, scale %s.\n\n", time.Now().UTC().Format("2006-01-02"),
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), map[bool]string{true: "on", false: "off"}[raceEnabled], scale)
	fmt.Fprintf(&b, "| class | backend | messages | tried | injected | processed | duplicates | losses | repeats after an unrecorded effect | what else was seen | reproduce with `go test -race -count=1 ./tests/faults/` and |\n")
	fmt.Fprintf(&b, "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, f := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %d | %d | %s | `-run '%s'` |\n",
			f.Class, f.Backend, f.Messages, f.Tried, f.Injected, f.Processed, f.Duplicates, f.Losses, f.Repeats,
			strings.ReplaceAll(f.Note, "|", "\\|"), f.Run)
	}
	return b.String()
}
