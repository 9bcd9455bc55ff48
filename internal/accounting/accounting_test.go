package accounting

import (
	"testing"
	"time"
)

// TestAccount checks the accounting itself on made-up histories, so that the
// storm's verdict cannot pass by construction.
func TestAccount(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	c := func(w int, key string, ms int) Call { return Call{Worker: w, Key: key, Start: at(ms)} }
	for _, tc := range []struct {
		name                                         string
		calls                                        []Call
		lines                                        []Line
		kills                                        []Kill
		extra, explained, unexplained, killsInWindow int
	}{
		{name: "one call per key", calls: []Call{c(0, "a", 0), c(1, "b", 0)},
			lines: []Line{{Worker: 0, Key: "a", Outcome: "ran", Time: at(5)}}},
		{name: "worker killed after its call, before its done record", calls: []Call{c(0, "a", 0), c(1, "a", 3000)},
			kills: []Kill{{Worker: 0, At: at(2)}}, extra: 1, explained: 1, killsInWindow: 1},
		{name: "second call without a kill", calls: []Call{c(0, "a", 0), c(1, "a", 3000)},
			lines: []Line{{Worker: 0, Key: "a", Outcome: "ran", Time: at(5)}}, extra: 1, unexplained: 1},
		{name: "kill before the call", calls: []Call{c(0, "a", 10), c(1, "a", 3000)},
			kills: []Kill{{Worker: 0, At: at(5)}}, extra: 1, unexplained: 1},
		{name: "kill after the body's outcome was logged", calls: []Call{c(0, "a", 0), c(1, "a", 3000)},
			lines: []Line{{Worker: 0, Key: "a", Outcome: "ran", Time: at(5)}}, kills: []Kill{{Worker: 0, At: at(9)}}, extra: 1, unexplained: 1},
		{name: "kill of another worker", calls: []Call{c(0, "a", 0), c(1, "a", 3000)},
			kills: []Kill{{Worker: 2, At: at(2)}}, extra: 1, unexplained: 1},
		{name: "a later in-progress line does not close the window", calls: []Call{c(0, "a", 0), c(1, "a", 3000)},
			lines: []Line{{Worker: 0, Key: "a", Outcome: "in-progress", Time: at(1)}}, kills: []Kill{{Worker: 0, At: at(2)}},
			extra: 1, explained: 1, killsInWindow: 1},
		{name: "three calls, one kill", calls: []Call{c(0, "a", 0), c(1, "a", 3000), c(2, "a", 6000)},
			kills: []Kill{{Worker: 0, At: at(2)}}, extra: 2, explained: 1, unexplained: 1, killsInWindow: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Account(tc.calls, tc.lines, tc.kills)
			if a.Extra != tc.extra || a.Explained != tc.explained || a.Unexplained != tc.unexplained || a.KillsInWindow != tc.killsInWindow {
				t.Errorf("account = %+v; want extra %d, explained %d, unexplained %d, kills in window %d",
					a, tc.extra, tc.explained, tc.unexplained, tc.killsInWindow)
			}
		})
	}
}
