package e2e_test

import (
	"testing"
	"time"
)

// bodyOutcomes are the delivery lines a worker writes only after the body ran:
// the call that body made is finished, one way or the other.
var bodyOutcomes = map[string]bool{"ran": true, "body-failed": true, "not-recorded": true, "fenced-out": true, "permanent": true}

// accounting explains the supplier calls beyond one per key.
type accounting struct {
	// Calls counts supplier calls; Keys the distinct keys called; Extra the
	// calls beyond one per key.
	Calls, Keys, Extra int
	// Cut counts calls whose worker was killed after the call started and
	// before it logged the body's outcome: calls inside the window between the
	// supplier call and the done record. Explained is the extra calls they
	// account for, Unexplained the rest (must be 0).
	Cut, Explained, Unexplained int
	// KillsInWindow counts the kills that cut at least one call.
	KillsInWindow int
	// UnexplainedKeys lists keys with unexplained calls (at most 10).
	UnexplainedKeys []string
}

// account classifies every call: a call is cut when its worker was killed at
// or after the call started with no body outcome logged by that worker for the
// key in between. Per key, calls − 1 must not exceed the cut calls. A kill
// between the done record and the worker's log line also counts as cutting
// the call, which can only add cut calls to a key that has no extra ones; it
// never hides an extra call.
func account(calls []call, lines []line, kills []kill) accounting {
	type wk struct {
		worker int
		key    string
	}
	done := map[wk][]time.Time{}
	for _, l := range lines {
		if bodyOutcomes[l.Outcome] {
			done[wk{l.Worker, l.Key}] = append(done[wk{l.Worker, l.Key}], l.Time)
		}
	}
	killsOf := map[int][]kill{}
	for _, k := range kills {
		killsOf[k.Worker] = append(killsOf[k.Worker], k)
	}
	var a accounting
	perKey := map[string]struct{ calls, cut int }{}
	usedKill := map[kill]bool{}
	for _, c := range calls {
		a.Calls++
		pk := perKey[c.Key]
		pk.calls++
		if k, ok := cutBy(c, killsOf[c.Worker], done[wk{c.Worker, c.Key}]); ok {
			pk.cut++
			a.Cut++
			usedKill[k] = true
		}
		perKey[c.Key] = pk
	}
	for key, pk := range perKey {
		a.Keys++
		extra := pk.calls - 1
		a.Extra += extra
		explained := min(extra, pk.cut)
		a.Explained += explained
		if extra > explained {
			a.Unexplained += extra - explained
			if len(a.UnexplainedKeys) < 10 {
				a.UnexplainedKeys = append(a.UnexplainedKeys, key)
			}
		}
	}
	a.KillsInWindow = len(usedKill)
	return a
}

// cutBy returns the first kill of the call's worker at or after the call
// started, if the worker logged no body outcome for the key between the two.
func cutBy(c call, kills []kill, doneAt []time.Time) (kill, bool) {
	for _, k := range kills {
		if k.At.Before(c.Start) {
			continue
		}
		for _, d := range doneAt {
			if !d.Before(c.Start) && d.Before(k.At) {
				return kill{}, false
			}
		}
		return k, true
	}
	return kill{}, false
}

// TestAccount checks the accounting itself on made-up histories, so that the
// storm's verdict cannot pass by construction.
func TestAccount(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	c := func(w int, key string, ms int) call { return call{Worker: w, Key: key, Start: at(ms)} }
	for _, tc := range []struct {
		name                                         string
		calls                                        []call
		lines                                        []line
		kills                                        []kill
		extra, explained, unexplained, killsInWindow int
	}{
		{name: "one call per key", calls: []call{c(0, "a", 0), c(1, "b", 0)},
			lines: []line{{Worker: 0, Key: "a", Outcome: "ran", Time: at(5)}}},
		{name: "worker killed after its call, before its done record", calls: []call{c(0, "a", 0), c(1, "a", 3000)},
			kills: []kill{{Worker: 0, At: at(2)}}, extra: 1, explained: 1, killsInWindow: 1},
		{name: "second call without a kill", calls: []call{c(0, "a", 0), c(1, "a", 3000)},
			lines: []line{{Worker: 0, Key: "a", Outcome: "ran", Time: at(5)}}, extra: 1, unexplained: 1},
		{name: "kill before the call", calls: []call{c(0, "a", 10), c(1, "a", 3000)},
			kills: []kill{{Worker: 0, At: at(5)}}, extra: 1, unexplained: 1},
		{name: "kill after the body's outcome was logged", calls: []call{c(0, "a", 0), c(1, "a", 3000)},
			lines: []line{{Worker: 0, Key: "a", Outcome: "ran", Time: at(5)}}, kills: []kill{{Worker: 0, At: at(9)}}, extra: 1, unexplained: 1},
		{name: "kill of another worker", calls: []call{c(0, "a", 0), c(1, "a", 3000)},
			kills: []kill{{Worker: 2, At: at(2)}}, extra: 1, unexplained: 1},
		{name: "a later in-progress line does not close the window", calls: []call{c(0, "a", 0), c(1, "a", 3000)},
			lines: []line{{Worker: 0, Key: "a", Outcome: "in-progress", Time: at(1)}}, kills: []kill{{Worker: 0, At: at(2)}},
			extra: 1, explained: 1, killsInWindow: 1},
		{name: "three calls, one kill", calls: []call{c(0, "a", 0), c(1, "a", 3000), c(2, "a", 6000)},
			kills: []kill{{Worker: 0, At: at(2)}}, extra: 2, explained: 1, unexplained: 1, killsInWindow: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := account(tc.calls, tc.lines, tc.kills)
			if a.Extra != tc.extra || a.Explained != tc.explained || a.Unexplained != tc.unexplained || a.KillsInWindow != tc.killsInWindow {
				t.Errorf("account = %+v; want extra %d, explained %d, unexplained %d, kills in window %d",
					a, tc.extra, tc.explained, tc.unexplained, tc.killsInWindow)
			}
		})
	}
}
