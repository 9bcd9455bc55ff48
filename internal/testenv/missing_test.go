package testenv

import (
	"runtime"
	"testing"
)

// endTB records how a test was ended: Fatalf or Skipf, each ending the
// goroutine as the real ones do.
type endTB struct {
	testing.TB
	how string
}

func (e *endTB) Helper()               {}
func (e *endTB) Fatalf(string, ...any) { e.how = "failed"; runtime.Goexit() }
func (e *endTB) Skipf(string, ...any)  { e.how = "skipped"; runtime.Goexit() }
func (e *endTB) run(f func(testing.TB)) string {
	done := make(chan struct{})
	go func() { defer close(done); f(e) }()
	<-done
	return e.how
}

// TestMissing: something missing fails the test under CI=true (any form
// strconv.ParseBool takes as true) and skips it otherwise.
func TestMissing(t *testing.T) {
	for ci, want := range map[string]string{"true": "failed", "1": "failed", "TRUE": "failed", "": "skipped", "false": "skipped", "maybe": "skipped"} {
		t.Setenv(envCI, ci)
		e := &endTB{TB: t}
		if got := e.run(func(tb testing.TB) { Missing(tb, "redis-server is missing") }); got != want {
			t.Errorf("CI=%q: the test %s, want %s", ci, got, want)
		}
	}
}
