package crashwindow_test

import (
	"slices"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/crashwindow"
)

// TestAccount checks the accounting itself on made-up histories, so that a
// verdict built on it cannot pass by construction.
func TestAccount(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	c := func(w int, key string, ms int) crashwindow.Call {
		return crashwindow.Call{Worker: w, Key: key, Start: at(ms)}
	}
	type line = crashwindow.Line
	type kill = crashwindow.Kill
	for _, tc := range []struct {
		name                                         string
		calls                                        []crashwindow.Call
		lines                                        []line
		kills                                        []kill
		extra, explained, unexplained, killsInWindow int
		afterUnrecorded                              int
		keys                                         []string
	}{
		{name: "one call per key", calls: []crashwindow.Call{c(0, "a", 0), c(1, "b", 0)},
			lines: []line{{Worker: 0, Key: "a", Outcome: "ran", Time: at(5)}}},
		{name: "worker killed after its call, before its done record", calls: []crashwindow.Call{c(0, "a", 0), c(1, "a", 3000)},
			kills: []kill{{Worker: 0, At: at(2)}}, extra: 1, explained: 1, killsInWindow: 1},
		{name: "second call without a kill", calls: []crashwindow.Call{c(0, "a", 0), c(1, "a", 3000)},
			lines: []line{{Worker: 0, Key: "a", Outcome: "ran", Time: at(5)}}, extra: 1, unexplained: 1, keys: []string{"a"}},
		{name: "kill before the call", calls: []crashwindow.Call{c(0, "a", 10), c(1, "a", 3000)},
			kills: []kill{{Worker: 0, At: at(5)}}, extra: 1, unexplained: 1, keys: []string{"a"}},
		{name: "kill after the body's outcome was logged", calls: []crashwindow.Call{c(0, "a", 0), c(1, "a", 3000)},
			lines: []line{{Worker: 0, Key: "a", Outcome: "ran", Time: at(5)}}, kills: []kill{{Worker: 0, At: at(9)}}, extra: 1, unexplained: 1, keys: []string{"a"}},
		{name: "kill of another worker", calls: []crashwindow.Call{c(0, "a", 0), c(1, "a", 3000)},
			kills: []kill{{Worker: 2, At: at(2)}}, extra: 1, unexplained: 1, keys: []string{"a"}},
		{name: "a later in-progress line does not close the window", calls: []crashwindow.Call{c(0, "a", 0), c(1, "a", 3000)},
			lines: []line{{Worker: 0, Key: "a", Outcome: "in-progress", Time: at(1)}}, kills: []kill{{Worker: 0, At: at(2)}},
			extra: 1, explained: 1, killsInWindow: 1},
		{name: "three calls, one kill", calls: []crashwindow.Call{c(0, "a", 0), c(1, "a", 3000), c(2, "a", 6000)},
			kills: []kill{{Worker: 0, At: at(2)}}, extra: 2, explained: 1, unexplained: 1, killsInWindow: 1, keys: []string{"a"}},
		{name: "repeat after a not-recorded answer", calls: []crashwindow.Call{c(0, "a", 0), c(1, "a", 4000)},
			lines: []line{{Worker: 0, Key: "a", Outcome: "not-recorded", Time: at(2500)}, {Worker: 1, Key: "a", Outcome: "ran", Time: at(4100)}},
			extra: 1, unexplained: 1, afterUnrecorded: 1, keys: []string{"a"}},
		{name: "not-recorded of a later delivery does not count for an earlier call", calls: []crashwindow.Call{c(0, "a", 0), c(0, "a", 4000)},
			lines: []line{{Worker: 0, Key: "a", Outcome: "ran", Time: at(100)}, {Worker: 0, Key: "a", Outcome: "not-recorded", Time: at(4100)}},
			extra: 1, unexplained: 1, keys: []string{"a"}},
		{name: "repeat after an accepted call whose answer was lost (body-failed)", calls: []crashwindow.Call{c(0, "a", 0), c(2, "a", 5800)},
			lines: []line{{Worker: 0, Key: "a", Outcome: "body-failed", Time: at(5400)}, {Worker: 2, Key: "a", Outcome: "ran", Time: at(5810)}},
			extra: 1, unexplained: 1, afterUnrecorded: 1, keys: []string{"a"}},
		{name: "a ran line is not an unrecorded effect", calls: []crashwindow.Call{c(0, "a", 0), c(2, "a", 5800)},
			lines: []line{{Worker: 0, Key: "a", Outcome: "ran", Time: at(400)}, {Worker: 0, Key: "a", Outcome: "body-failed", Time: at(5400)}},
			extra: 1, unexplained: 1, keys: []string{"a"}},
		{name: "not-recorded by another worker does not count", calls: []crashwindow.Call{c(0, "a", 0), c(1, "a", 4000)},
			lines: []line{{Worker: 0, Key: "a", Outcome: "ran", Time: at(100)}, {Worker: 2, Key: "a", Outcome: "not-recorded", Time: at(200)}},
			extra: 1, unexplained: 1, keys: []string{"a"}},
		{name: "a kill explains before not-recorded does", calls: []crashwindow.Call{c(0, "a", 0), c(1, "a", 4000)},
			lines: []line{{Worker: 1, Key: "a", Outcome: "not-recorded", Time: at(4200)}}, kills: []kill{{Worker: 0, At: at(50)}},
			extra: 1, explained: 1, killsInWindow: 1},
		{name: "unexplained keys are sorted", calls: []crashwindow.Call{c(0, "b", 0), c(1, "b", 10), c(0, "a", 0), c(1, "a", 10)},
			extra: 2, unexplained: 2, keys: []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := crashwindow.Account(tc.calls, tc.lines, tc.kills)
			if a.Extra != tc.extra || a.Explained != tc.explained || a.Unexplained != tc.unexplained || a.KillsInWindow != tc.killsInWindow ||
				a.AfterUnrecorded != tc.afterUnrecorded {
				t.Errorf("Account = %+v; want extra %d, explained %d, unexplained %d, kills in window %d, after unrecorded %d",
					a, tc.extra, tc.explained, tc.unexplained, tc.killsInWindow, tc.afterUnrecorded)
			}
			if !slices.Equal(a.UnexplainedKeys, tc.keys) {
				t.Errorf("UnexplainedKeys = %q, want %q", a.UnexplainedKeys, tc.keys)
			}
			if wantU := tc.keys[:min(len(tc.keys), tc.afterUnrecorded)]; !slices.Equal(a.UnrecordedKeys, wantU) {
				t.Errorf("UnrecordedKeys = %q, want %q", a.UnrecordedKeys, wantU)
			}
		})
	}
}
