package e2e_test

import (
	"slices"
	"sync"
	"time"
)

// line is one delivery line a worker logged (push.Guard writes one per
// delivery, after it answered).
type line struct {
	Worker    int
	Time      time.Time
	Outcome   string
	Key       string
	MessageID string
	Attempt   int
	Status    int
}

// kill is one SIGKILL the suite sent.
type kill struct {
	Worker int
	At     time.Time
}

// logBook collects the workers' delivery lines and the kills.
type logBook struct {
	mu    sync.Mutex
	lines []line
	kills []kill
	// changed is closed and replaced whenever a line arrives.
	changed chan struct{}
}

func newLogBook() *logBook { return &logBook{changed: make(chan struct{})} }

// sink returns the workerproc line callback for worker i.
func (b *logBook) sink(i int) func(map[string]any) {
	return func(m map[string]any) {
		out, ok := m["outcome"].(string)
		if !ok {
			return
		}
		l := line{Worker: i, Outcome: out}
		l.Key, _ = m["key"].(string)
		l.MessageID, _ = m["message_id"].(string)
		if f, ok := m["delivery_attempt"].(float64); ok {
			l.Attempt = int(f)
		}
		if f, ok := m["status"].(float64); ok {
			l.Status = int(f)
		}
		if s, ok := m["time"].(string); ok {
			l.Time, _ = time.Parse(time.RFC3339Nano, s)
		}
		b.mu.Lock()
		b.lines = append(b.lines, l)
		close(b.changed)
		b.changed = make(chan struct{})
		b.mu.Unlock()
	}
}

func (b *logBook) addKill(k kill) {
	b.mu.Lock()
	b.kills = append(b.kills, k)
	b.mu.Unlock()
}

// Lines returns the lines so far.
func (b *logBook) Lines() []line {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.lines)
}

// Kills returns the kills so far.
func (b *logBook) Kills() []kill {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.kills)
}

// count returns how many lines match pred (nil matches all).
func (b *logBook) count(pred func(line) bool) int {
	n := 0
	for _, l := range b.Lines() {
		if pred == nil || pred(l) {
			n++
		}
	}
	return n
}

// outcomes counts lines by outcome.
func (b *logBook) outcomes() map[string]int {
	m := map[string]int{}
	for _, l := range b.Lines() {
		m[l.Outcome]++
	}
	return m
}

// waitFor waits until some line matches pred, or until timeout; it reports
// whether one did.
func (b *logBook) waitFor(pred func(line) bool, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		found := slices.ContainsFunc(b.lines, pred)
		ch := b.changed
		b.mu.Unlock()
		if found {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// is matches lines of one worker (−1: any) with one outcome for one message.
func is(worker int, outcome, messageID string) func(line) bool {
	return func(l line) bool {
		return (worker < 0 || l.Worker == worker) && l.Outcome == outcome && (messageID == "" || l.MessageID == messageID)
	}
}
