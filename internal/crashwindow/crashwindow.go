// Package crashwindow explains repeated supplier calls the way
// docs/RELIABILITY.md's crash storm does. The gateway runs a key's body again
// only when the first run's worker died inside the window between the supplier
// call and the done record (docs/design.md, "keying the sink"), so every call
// beyond one per key must be matched by a kill of the calling worker inside that
// window. Account does the matching; a repeat it cannot match is a bug (the
// gateway ran the body twice with no crash to excuse it).
package crashwindow

import (
	"sort"
	"time"
)

// BodyOutcomes are the outcomes a worker logs only after the body ran: the call
// that body made is finished, one way or the other, so the window is closed.
var BodyOutcomes = map[string]bool{"ran": true, "body-failed": true, "not-recorded": true, "fenced-out": true, "permanent": true}

// UnrecordedOutcomes are the body outcomes that leave an effect unrecorded
// when the call before them took effect: "body-failed" (the body returned an
// error, its answer lost to the work deadline, say, so the gate released the
// claim and the message was redelivered) and "not-recorded" (the done record
// and the best-effort unknown mark both failed, so the record stayed claimed
// until its lease lapsed).
var UnrecordedOutcomes = map[string]bool{"body-failed": true, "not-recorded": true}

// Call is one supplier call: which worker made it, for which key, and when it
// started.
type Call struct {
	Worker int
	Key    string
	Start  time.Time
}

// Line is one delivery line a worker logged: its outcome for a key, and when.
type Line struct {
	Worker  int
	Key     string
	Outcome string
	Time    time.Time
}

// Kill is one SIGKILL sent to a worker.
type Kill struct {
	Worker int
	At     time.Time
}

// Accounting explains the calls beyond one per key.
type Accounting struct {
	// Calls counts the calls; Keys the distinct keys called; Extra the calls
	// beyond one per key.
	Calls, Keys, Extra int
	// Cut counts calls whose worker was killed after the call started and
	// before it logged a body outcome for the key: calls inside the window
	// between the supplier call and the done record. Explained is the extra
	// calls they account for, Unexplained the rest (must be 0).
	Cut, Explained, Unexplained int
	// KillsInWindow counts the kills that cut at least one call.
	KillsInWindow int
	// AfterUnrecorded counts the unexplained extra calls (already in
	// Unexplained) that follow, for their key, a call whose worker then logged
	// an unrecorded effect (UnrecordedOutcomes): the call took effect but the
	// gate could not record it, so it let a later delivery run the body again.
	// That repeat is the gap docs/design.md's ack table leaves when the answer
	// or the store fails after the effect (the fault suite's "repeats after an
	// unrecorded effect"), not a double run under a live claim; a verdict may
	// report it apart, never drop it. It is meaningful only when Account is
	// given the calls that took effect (accepted by the supplier).
	AfterUnrecorded int
	// UnexplainedKeys lists the keys with unexplained calls, sorted (at most
	// MaxKeys).
	UnexplainedKeys []string
	// UnrecordedKeys lists the keys in UnexplainedKeys all of whose
	// unexplained extra calls AfterUnrecorded accounts for, sorted (at most
	// MaxKeys).
	UnrecordedKeys []string
}

// MaxKeys bounds Accounting.UnexplainedKeys.
const MaxKeys = 10

// Account classifies every call: a call is cut when its worker was killed at
// or after the call started with no body outcome logged by that worker for the
// key in between. Per key, calls − 1 must not exceed the cut calls. A kill
// between the done record and the worker's log line also counts as cutting
// the call, which can only add cut calls to a key that has no extra ones; it
// never hides an extra call.
func Account(calls []Call, lines []Line, kills []Kill) Accounting {
	type wk struct {
		worker int
		key    string
	}
	done := map[wk][]time.Time{}
	body := map[wk][]Line{}
	for _, l := range lines {
		if BodyOutcomes[l.Outcome] {
			done[wk{l.Worker, l.Key}] = append(done[wk{l.Worker, l.Key}], l.Time)
			body[wk{l.Worker, l.Key}] = append(body[wk{l.Worker, l.Key}], l)
		}
	}
	killsOf := map[int][]Kill{}
	for _, k := range kills {
		killsOf[k.Worker] = append(killsOf[k.Worker], k)
	}
	var a Accounting
	perKey := map[string]struct{ calls, cut int }{}
	var unrecorded []Call // calls whose worker then logged an unrecorded effect
	usedKill := map[Kill]bool{}
	for _, c := range calls {
		a.Calls++
		pk := perKey[c.Key]
		pk.calls++
		if k, ok := cutBy(c, killsOf[c.Worker], done[wk{c.Worker, c.Key}]); ok {
			pk.cut++
			a.Cut++
			usedKill[k] = true
		} else if l, ok := firstOutcome(c, body[wk{c.Worker, c.Key}]); ok && UnrecordedOutcomes[l.Outcome] {
			unrecorded = append(unrecorded, c)
		}
		perKey[c.Key] = pk
	}
	// An unrecorded call can account for a later call of its key only.
	followed := map[string]int{}
	for _, u := range unrecorded {
		for _, c := range calls {
			if c.Key == u.Key && c.Start.After(u.Start) {
				followed[u.Key]++
				break
			}
		}
	}
	var unexplained, unrecordedKeys []string
	for key, pk := range perKey {
		a.Keys++
		extra := pk.calls - 1
		a.Extra += extra
		explained := min(extra, pk.cut)
		a.Explained += explained
		if extra > explained {
			a.Unexplained += extra - explained
			a.AfterUnrecorded += min(extra-explained, followed[key])
			unexplained = append(unexplained, key)
			if followed[key] >= extra-explained {
				unrecordedKeys = append(unrecordedKeys, key)
			}
		}
	}
	sort.Strings(unexplained)
	sort.Strings(unrecordedKeys)
	a.UnexplainedKeys = unexplained[:min(len(unexplained), MaxKeys)]
	a.UnrecordedKeys = unrecordedKeys[:min(len(unrecordedKeys), MaxKeys)]
	a.KillsInWindow = len(usedKill)
	return a
}

// firstOutcome returns the first body outcome its worker logged for the
// call's key at or after the call started.
func firstOutcome(c Call, body []Line) (Line, bool) {
	var first Line
	found := false
	for _, l := range body {
		if !l.Time.Before(c.Start) && (!found || l.Time.Before(first.Time)) {
			first, found = l, true
		}
	}
	return first, found
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
