// Command loadgen is the load generator of the push-path benchmarks: a
// closed-loop client that keeps -c requests in flight against one URL, each a
// real wrapped Pub/Sub push request (internal/pushbridge.Envelope) carrying a
// message id no other request of the run uses (or, with -dup, one id for all),
// and prints one JSON line (Result) with requests/s and latency percentiles.
// It runs as its own process, so its CPU and garbage collection are not charged
// to the server under test, over loopback.
//
// It runs for -warmup (not measured) then -duration, or, with -n, sends exactly
// n requests and measures all of them. With -stats it GETs that URL (with -n,
// every -stats-every completed requests and at the end; else at both ends of
// the measured window) and includes the answers.
//
// Usage:
//
//	loadgen -url http://127.0.0.1:PORT/gated -c 16 -duration 5s -warmup 1s
//	loadgen -url http://127.0.0.1:PORT/gated -c 16 -n 100000 -stats http://127.0.0.1:PORT/stats -stats-every 10000
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	cfg, err := parseFlags()
	if err == nil {
		var res Result
		res, err = Run(cfg)
		if err == nil {
			err = json.NewEncoder(os.Stdout).Encode(res)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func parseFlags() (Config, error) {
	var c Config
	flag.StringVar(&c.URL, "url", "", "endpoint to POST push requests to (required)")
	flag.IntVar(&c.Concurrency, "c", 1, "requests in flight")
	flag.DurationVar(&c.Duration, "duration", 5*time.Second, "measured time (ignored with -n)")
	flag.DurationVar(&c.Warmup, "warmup", time.Second, "unmeasured time before it (ignored with -n)")
	flag.IntVar(&c.N, "n", 0, "send exactly this many requests and measure them all (0: run for -duration)")
	flag.StringVar(&c.IDPrefix, "id-prefix", fmt.Sprintf("lg%d-%d", os.Getpid(), time.Now().UnixNano()), "message ids are <prefix>-<n>")
	flag.BoolVar(&c.Dup, "dup", false, "send one message id in every request (duplicates after the first)")
	flag.IntVar(&c.DataBytes, "data", 64, "message data size in bytes")
	flag.StringVar(&c.StatsURL, "stats", "", "URL to GET while running (the target's /stats)")
	flag.IntVar(&c.StatsEvery, "stats-every", 10000, "GET -stats every this many completed requests")
	flag.Parse()
	switch {
	case c.URL == "":
		return c, errors.New("-url is required")
	case c.Concurrency < 1:
		return c, errors.New("-c must be at least 1")
	case c.N < 0, c.DataBytes < 0, c.StatsEvery < 1:
		return c, errors.New("-n, -data and -stats-every must not be negative (-stats-every at least 1)")
	}
	return c, nil
}
