package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/oncegate/oncegate/internal/pushbridge"
)

// Config is one load run.
type Config struct {
	URL         string
	Concurrency int
	Duration    time.Duration
	Warmup      time.Duration
	N           int
	IDPrefix    string
	Dup         bool
	DataBytes   int
	StatsURL    string
	StatsEvery  int
}

// Result is the JSON line loadgen prints. Latencies are in microseconds, from
// just before a request is written to when its whole answer has been read.
type Result struct {
	URL         string  `json:"url"`
	Concurrency int     `json:"concurrency"`
	Requests    int     `json:"requests"`
	Errors      int     `json:"errors"`
	Seconds     float64 `json:"seconds"`
	RPS         float64 `json:"rps"`
	P50Micros   float64 `json:"p50_us"`
	P90Micros   float64 `json:"p90_us"`
	P99Micros   float64 `json:"p99_us"`
	MaxMicros   float64 `json:"max_us"`
	// Statuses counts answers by HTTP status; 0 counts transport errors.
	Statuses map[int]int `json:"statuses"`
	// Samples are the -stats answers, each with the requests completed when it
	// was taken: with -n every -stats-every requests and at the end; with
	// -duration at the start and at the end of the measured window.
	Samples []Sample `json:"samples,omitempty"`
}

// Sample is one -stats answer.
type Sample struct {
	Completed int             `json:"completed"`
	Stats     json.RawMessage `json:"stats"`
}

type worker struct {
	lat      []time.Duration
	statuses map[int]int
}

// Run runs the load and returns its figures. Any answer but 204 counts as an
// error (the target answers 204 to every push it handled).
func Run(cfg Config) (Result, error) {
	client := &http.Client{
		Timeout: time.Minute,
		Transport: &http.Transport{
			MaxIdleConnsPerHost: cfg.Concurrency, MaxConnsPerHost: cfg.Concurrency,
			DisableCompression: true, IdleConnTimeout: time.Minute,
		},
	}
	data := bytes.Repeat([]byte("x"), cfg.DataBytes)
	var (
		next      atomic.Int64 // message number
		completed atomic.Int64
		measuring atomic.Bool
		stopped   atomic.Bool
		samplesMu sync.Mutex
		samples   []Sample
	)
	sample := func(done int) {
		if cfg.StatsURL == "" {
			return
		}
		s, err := getStats(client, cfg.StatsURL)
		if err != nil {
			s = json.RawMessage(strconv.Quote(err.Error()))
		}
		samplesMu.Lock()
		samples = append(samples, Sample{Completed: done, Stats: s})
		samplesMu.Unlock()
	}
	workers := make([]*worker, cfg.Concurrency)
	var wg sync.WaitGroup
	ctx := context.Background()
	for i := range workers {
		w := &worker{statuses: map[int]int{}}
		workers[i] = w
		wg.Go(func() {
			for !stopped.Load() {
				n := next.Add(1)
				if cfg.N > 0 && n > int64(cfg.N) {
					return
				}
				id := cfg.IDPrefix + "-" + strconv.FormatInt(n, 10)
				if cfg.Dup {
					id = cfg.IDPrefix + "-dup"
				}
				body, err := pushbridge.Envelope(&pubsubpb.PubsubMessage{
					Data: data, MessageId: id, PublishTime: timestamppb.Now(),
					Attributes: map[string]string{"region": "eu"},
				}, "projects/bench/subscriptions/orders-push", 1)
				if err != nil {
					panic(err) // a marshalling bug, not a load result
				}
				start := time.Now()
				status := post(ctx, client, cfg.URL, body)
				lat := time.Since(start)
				if cfg.N > 0 || measuring.Load() {
					w.lat = append(w.lat, lat)
					w.statuses[status]++
				}
				if done := completed.Add(1); cfg.N > 0 && done%int64(cfg.StatsEvery) == 0 {
					sample(int(done))
				}
			}
		})
	}
	var (
		began   time.Time
		elapsed time.Duration
	)
	if cfg.N > 0 {
		began = time.Now()
		measuring.Store(true)
		wg.Wait()
		elapsed = time.Since(began)
		if completed.Load()%int64(cfg.StatsEvery) != 0 {
			sample(int(completed.Load()))
		}
	} else {
		// Sample at both ends of the measured window, so the caller can
		// charge the target's CPU time to the requests measured.
		time.Sleep(cfg.Warmup)
		sample(int(completed.Load()))
		began = time.Now()
		measuring.Store(true)
		time.Sleep(cfg.Duration)
		measuring.Store(false)
		elapsed = time.Since(began)
		sample(int(completed.Load()))
		stopped.Store(true)
		wg.Wait()
	}
	return summarize(cfg, workers, elapsed, samples), nil
}

func post(ctx context.Context, c *http.Client, url string, body []byte) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

func getStats(c *http.Client, url string) (json.RawMessage, error) {
	resp, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || !json.Valid(b) {
		return nil, fmt.Errorf("stats: status %d", resp.StatusCode)
	}
	return bytes.TrimSpace(b), nil
}

func summarize(cfg Config, workers []*worker, elapsed time.Duration, samples []Sample) Result {
	r := Result{URL: cfg.URL, Concurrency: cfg.Concurrency, Seconds: elapsed.Seconds(), Statuses: map[int]int{}, Samples: samples}
	var all []time.Duration
	for _, w := range workers {
		all = append(all, w.lat...)
		for s, n := range w.statuses {
			r.Statuses[s] += n
			if s != http.StatusNoContent {
				r.Errors += n
			}
		}
	}
	r.Requests = len(all)
	if r.Requests == 0 {
		return r
	}
	slices.Sort(all)
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	r.RPS = float64(r.Requests) / elapsed.Seconds()
	r.P50Micros = us(percentile(all, 0.50))
	r.P90Micros = us(percentile(all, 0.90))
	r.P99Micros = us(percentile(all, 0.99))
	r.MaxMicros = us(all[len(all)-1])
	return r
}

// percentile returns the nearest-rank percentile q (0 < q ≤ 1) of sorted.
func percentile(sorted []time.Duration, q float64) time.Duration {
	i := int(float64(len(sorted))*q+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
