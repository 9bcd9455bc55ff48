// Package accounting explains every repeated side effect of a crash storm:
// a call to the supplier beyond one per key must have been cut by a SIGKILL of
// its worker between the call and the worker's done record (the window no
// gateway can close), or it is unexplained. The push storm (tests/) and the
// pull storm (tests/pull) judge their runs with it.
package accounting

import "time"

// Call is one request that reached the supplier.
type Call struct {
	// Worker is the calling worker's index; Key the Idempotency-Key; Start
	// when the call arrived.
	Worker int
	Key    string
	Start  time.Time
}

// Line is one delivery line a worker logged after the gate answered.
type Line struct {
	Worker  int
	Time    time.Time
	Outcome string
	Key     string
}

// Kill is one SIGKILL the storm sent.
type Kill struct {
	Worker int
	At     time.Time
}

// BodyOutcomes are the delivery lines a worker writes only after the body ran:
// the call that body made is finished, one way or the other.
var BodyOutcomes = map[string]bool{"ran": true, "body-failed": true, "not-recorded": true, "fenced-out": true, "permanent": true}

// Result explains the supplier calls beyond one per key.
type Result struct {
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

// Account classifies every call: a call is cut when its worker was killed at
// or after the call started with no body outcome logged by that worker for the
// key in between. Per key, calls − 1 must not exceed the cut calls. A kill
// between the done record and the worker's log line also counts as cutting
// the call, which can only add cut calls to a key that has no extra ones; it
// never hides an extra call.
func Account(calls []Call, lines []Line, kills []Kill) Result {
	type wk struct {
		worker int
		key    string
	}
	done := map[wk][]time.Time{}
	for _, l := range lines {
		if BodyOutcomes[l.Outcome] {
			done[wk{l.Worker, l.Key}] = append(done[wk{l.Worker, l.Key}], l.Time)
		}
	}
	killsOf := map[int][]Kill{}
	for _, k := range kills {
		killsOf[k.Worker] = append(killsOf[k.Worker], k)
	}
	var a Result
	perKey := map[string]struct{ calls, cut int }{}
	usedKill := map[Kill]bool{}
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
func cutBy(c Call, kills []Kill, doneAt []time.Time) (Kill, bool) {
	for _, k := range kills {
		if k.At.Before(c.Start) {
			continue
		}
		for _, d := range doneAt {
			if !d.Before(c.Start) && d.Before(k.At) {
				return Kill{}, false
			}
		}
		return k, true
	}
	return Kill{}, false
}
