package pathcost

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
)

// The floors: the fewest store round trips any design of the gateway can make.
// A fresh message must claim the key and record it done; a duplicate must ask
// the store once; a repeated duplicate on an instance that already saw the key
// done need not ask at all.
const (
	FloorFresh           = 2
	FloorDuplicate       = 1
	FloorCachedDuplicate = 0
)

// ReportEnv names the environment variable holding the report file's path.
const ReportEnv = "ONCEGATE_BENCH_REPORT"

// Cost is one backend's counted figures. Calls are calls on the gate's
// backend port; Trips are store round trips (see stores.Kind.Trips); Wire are
// request–response exchanges counted on the one warm network connection, -1
// when the backend is not reached over a counted connection.
type Cost struct {
	Backend string `json:"backend"`

	FreshCalls     int64 `json:"fresh_calls"`
	FreshTrips     int64 `json:"fresh_trips"`
	FreshWire      int64 `json:"fresh_wire"`
	DupCalls       int64 `json:"dup_calls"`
	DupTrips       int64 `json:"dup_trips"`
	DupWire        int64 `json:"dup_wire"`
	CachedDupCalls int64 `json:"cached_dup_calls"`
	CachedDupTrips int64 `json:"cached_dup_trips"`
	// FreshDetail and DupDetail list the counts behind the figures
	// ("sql_query=1 sql_exec=1", "…/Lookup=1 …/Commit=1").
	FreshDetail string `json:"fresh_detail"`
	DupDetail   string `json:"dup_detail"`
}

// Contention is what N concurrent deliveries of one key cost a backend.
type Contention struct {
	Backend    string `json:"backend"`
	Deliveries int    `json:"deliveries"`
	// Bodies is how many deliveries ran the body (must be 1).
	Bodies int `json:"bodies"`
	// Refused is how many were answered without running it, and
	// RefusedStatus their HTTP status.
	Refused       int `json:"refused"`
	RefusedStatus int `json:"refused_status"`
	// RefusedCallsMax is the most port calls one refused delivery made;
	// RefusedTripsMin and RefusedTripsMax bound its store round trips.
	RefusedCallsMax int64 `json:"refused_calls_max"`
	RefusedTripsMin int64 `json:"refused_trips_min"`
	RefusedTripsMax int64 `json:"refused_trips_max"`
	// RefusedTripsTotal is the round trips all refused deliveries made.
	RefusedTripsTotal int64 `json:"refused_trips_total"`
	// WinnerTrips is the round trips of the delivery that ran the body.
	WinnerTrips int64 `json:"winner_trips"`
}

// Report is what the tests write to the file ReportEnv names.
type Report struct {
	Costs      []Cost       `json:"costs"`
	Contention []Contention `json:"contention"`
}

// collected gathers the figures of one test binary.
var collected struct {
	mu sync.Mutex
	r  Report
}

// record keeps c, replacing an earlier figure of its backend (-count runs).
func record(c Cost) {
	collected.mu.Lock()
	defer collected.mu.Unlock()
	collected.r.Costs = slices.DeleteFunc(collected.r.Costs, func(o Cost) bool { return o.Backend == c.Backend })
	collected.r.Costs = append(collected.r.Costs, c)
}

// recordContention keeps c, replacing an earlier figure of its backend.
func recordContention(c Contention) {
	collected.mu.Lock()
	defer collected.mu.Unlock()
	collected.r.Contention = slices.DeleteFunc(collected.r.Contention, func(o Contention) bool { return o.Backend == c.Backend })
	collected.r.Contention = append(collected.r.Contention, c)
}

// writeReport writes the collected figures to the file ReportEnv names, if
// any, sorted by backend in order.
func writeReport(order []string) error {
	path := os.Getenv(ReportEnv)
	if path == "" {
		return nil
	}
	collected.mu.Lock()
	r := collected.r
	collected.mu.Unlock()
	rank := func(b string) int { return slices.Index(order, b) }
	slices.SortFunc(r.Costs, func(a, b Cost) int { return rank(a.Backend) - rank(b.Backend) })
	slices.SortFunc(r.Contention, func(a, b Contention) int { return rank(a.Backend) - rank(b.Backend) })
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", ReportEnv, err)
	}
	return nil
}

// ReadReport reads a report file the tests wrote.
func ReadReport(path string) (Report, error) {
	var r Report
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("read report %s: %w", path, err)
	}
	return r, nil
}
