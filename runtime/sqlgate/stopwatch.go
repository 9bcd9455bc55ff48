package sqlgate

import "time"

// stopwatch measures how long a statement ran on the process's monotonic
// clock. It is the only reading of the process clock in sqlgate, and it never
// reaches a record: leases and expiries are computed by the server. MySQL has
// no server clock reading after an INSERT's lock wait, so the run time is what
// tells freshenMySQL the INSERT waited.
type stopwatch struct{ start time.Time }

func startStopwatch() stopwatch { return stopwatch{start: time.Now()} }

func (w stopwatch) elapsed() time.Duration { return time.Since(w.start) }
