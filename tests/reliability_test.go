package e2e_test

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// Markers around the crash-storm figures in docs/RELIABILITY.md, one pair per
// Pub/Sub the storm ran on.
var stormMarkers = map[string][2]string{
	pubsubFake:     {"<!-- crash-storm:begin -->", "<!-- crash-storm:end -->"},
	pubsubEmulator: {"<!-- crash-storm-emulator:begin -->", "<!-- crash-storm-emulator:end -->"},
}

// writeReliability replaces the text between the crash-storm markers of the
// file at path with a table of results, for each Pub/Sub results has rows
// for (the other tables stay as they are).
func writeReliability(path string, results []stormResult) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, ps := range []string{pubsubFake, pubsubEmulator} {
		var rs []stormResult
		for _, r := range results {
			if r.PubSub == ps {
				rs = append(rs, r)
			}
		}
		if len(rs) == 0 {
			continue
		}
		if text, err = replaceBetween(text, stormMarkers[ps], stormTable(rs)); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return os.WriteFile(path, text, 0o644)
}

// replaceBetween replaces what lies between the two markers in text.
func replaceBetween(text []byte, markers [2]string, body string) ([]byte, error) {
	i, j := bytes.Index(text, []byte(markers[0])), bytes.Index(text, []byte(markers[1]))
	if i < 0 || j < i {
		return nil, fmt.Errorf("no %s … %s section", markers[0], markers[1])
	}
	out := append(append([]byte(nil), text[:i]...), markers[0]+"\n\n"+body+"\n"...)
	return append(out, text[j:]...), nil
}

// stormTable renders storm results as a Markdown table with its run line.
func stormTable(results []stormResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Run %s on %s/%s, %d CPUs, race detector %s; seed %d.\n\n",
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), raceState(), seedOf(results))
	b.WriteString("| backend | orders | messages | deliveries | kills | supplier orders | lost | dead letters | raw calls | accepted calls | accepted beyond one per order | explained by a kill in the call→done window | after an unrecorded effect | unexplained | kills that cut a call | pushes lost to a crash (most for one message) | most deliveries of one message / max attempts | time |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d (%d) | %d / %d | %s |\n",
			r.Backend, r.Orders, r.Messages, r.Deliveries, r.Kills, r.SupplierOrders, r.Missing, r.DeadLetters, r.RawCalls, r.Acc.Calls,
			r.Acc.Extra, r.Acc.Explained, r.Acc.AfterUnrecorded, r.unexplained(), r.Acc.KillsInWindow,
			r.CrashedPushes, r.CrashedMost, r.MostDeliveries, r.MaxDeliveryAttempts, r.Duration.Round(time.Second))
	}
	return b.String()
}

func seedOf(rs []stormResult) uint64 {
	if len(rs) == 0 {
		return 0
	}
	return rs[0].Seed
}

// raceState is "on" or "off", for the run line.
func raceState() string {
	if raceEnabled {
		return "on"
	}
	return "off"
}
