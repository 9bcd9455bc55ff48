package e2e_test

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// Markers around the crash-storm figures in docs/RELIABILITY.md.
const (
	stormBegin = "<!-- crash-storm:begin -->"
	stormEnd   = "<!-- crash-storm:end -->"
)

// writeReliability replaces the text between the crash-storm markers of the
// file at path with a table of results.
func writeReliability(path string, results []stormResult) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i, j := bytes.Index(old, []byte(stormBegin)), bytes.Index(old, []byte(stormEnd))
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %s … %s section", path, stormBegin, stormEnd)
	}
	var b strings.Builder
	b.WriteString(stormBegin + "\n\n")
	fmt.Fprintf(&b, "Run %s on %s/%s, %d CPUs, race detector on; seed %d.\n\n",
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), seedOf(results))
	b.WriteString("| backend | orders | messages | deliveries | kills | supplier orders | lost | dead letters | raw calls | beyond one per order | explained by a kill in the call→done window | unexplained | of which the supplier accepted | kills that cut a call | time |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %s |\n",
			r.Backend, r.Orders, r.Messages, r.Deliveries, r.Kills, r.SupplierOrders, r.Missing, r.DeadLetters, r.Acc.Calls,
			r.Acc.Extra, r.Acc.Explained, r.Acc.Unexplained, r.SupplierRepeats, r.Acc.KillsInWindow, r.Duration.Round(time.Second))
	}
	b.WriteString("\n")
	out := append(append(append([]byte(nil), old[:i]...), b.String()...), old[j:]...)
	return os.WriteFile(path, out, 0o644)
}

func seedOf(rs []stormResult) uint64 {
	if len(rs) == 0 {
		return 0
	}
	return rs[0].Seed
}
